import fs from 'fs';
import { expect } from 'chai';
import { generatedText, REGENERATE_COMMAND, TOOLS_FILE } from '../../clients/mcp/scripts/generate-tools';

describe('clients/mcp: tool schemas are current', function () {
  this.timeout(60000);

  it('src/tools.generated.json equals the tools derived from the OpenAPI document of the current routes', () => {
    const committed = fs.existsSync(TOOLS_FILE) ? fs.readFileSync(TOOLS_FILE, 'utf8') : '';
    if (committed !== generatedText())
      expect.fail(
        `clients/mcp/src/tools.generated.json is out of date with the server's routes. Regenerate it with: ${REGENERATE_COMMAND}`,
      );
  });
});
