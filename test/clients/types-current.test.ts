import fs from 'fs';
import os from 'os';
import path from 'path';
import { expect } from 'chai';
import { generateTypes, SCHEMA_FILE, REGENERATE_COMMAND } from '../../clients/typescript/scripts/generate-types';

describe('clients/typescript: generated types are current', function () {
  this.timeout(60000);

  it('src/schema.d.ts equals the types generated from the OpenAPI document of the current routes', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-schema-'));
    try {
      const fresh = path.join(dir, 'schema.d.ts');
      generateTypes(fresh);
      const expected = fs.readFileSync(fresh, 'utf8');
      const committed = fs.existsSync(SCHEMA_FILE) ? fs.readFileSync(SCHEMA_FILE, 'utf8') : '';
      if (committed !== expected) {
        const a = committed.split('\n');
        const b = expected.split('\n');
        const first = a.findIndex((line, i) => line !== b[i]);
        const line = first === -1 ? Math.min(a.length, b.length) : first;
        expect.fail(
          `clients/typescript/src/schema.d.ts is out of date with the server's routes (first difference at line ${line + 1}:\n` +
            `  committed: ${JSON.stringify(a[line])}\n  generated: ${JSON.stringify(b[line])}).\nRegenerate it with: ${REGENERATE_COMMAND}`,
        );
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
