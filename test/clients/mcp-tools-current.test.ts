import fs from 'fs';
import { expect } from 'chai';
import { generatedText, REGENERATE_COMMAND, TOOLS_FILE } from '../../clients/mcp/scripts/generate-tools';
import { TOOLS } from '../../clients/mcp/src/server';
import { API_KEY_PREFIX, CLAIM_TOKEN_PREFIX, CONNECT_KEY_PREFIX } from '../../src/identity/secrets';

describe('clients/mcp: tool schemas are current', function () {
  this.timeout(60000);

  it('src/tools.generated.json equals the tools derived from the OpenAPI document of the current routes', () => {
    const committed = fs.existsSync(TOOLS_FILE) ? fs.readFileSync(TOOLS_FILE, 'utf8') : '';
    if (committed !== generatedText())
      expect.fail(
        `clients/mcp/src/tools.generated.json is out of date with the server's routes. Regenerate it with: ${REGENERATE_COMMAND}`,
      );
  });

  it('tool descriptions name keys by the prefixes the service gives them', () => {
    const prefixes = [API_KEY_PREFIX, CONNECT_KEY_PREFIX, CLAIM_TOKEN_PREFIX];
    for (const t of TOOLS)
      for (const m of t.description.matchAll(/\bsvc_[a-z]+_/g)) expect(prefixes, t.name).to.include(m[0]);
    expect(TOOLS.find((t) => t.name === 'connect_exchange')!.description).to.include(`${CONNECT_KEY_PREFIX}…`);
  });

  it("create_claim_token tells the agent to send the human the answer's claimPath link", () => {
    const d = TOOLS.find((t) => t.name === 'create_claim_token')!.description;
    expect(d).to.include('data.claimPath');
    expect(d).to.include('/claim?token=');
  });
});
