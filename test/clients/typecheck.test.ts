import path from 'path';
import { execFile } from 'child_process';
import { promisify } from 'util';
import { expect } from 'chai';

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/** clients/ and examples/ have their own tsconfig (the root one excludes them). */
describe('clients/typescript and examples/agent type-check with their own tsconfig', function () {
  this.timeout(120000);

  for (const project of ['clients/typescript/tsconfig.json', 'examples/agent/tsconfig.json']) {
    it(`tsc -p ${project}`, async () => {
      const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
      const result = await run(tsc, ['-p', project, '--noEmit'], { cwd: root }).then(
        () => '',
        (e: any) => String(e.stdout || e.message),
      );
      expect(result, result).to.equal('');
    });
  }
});
