import fs from 'fs';
import path from 'path';

/** The repository root, whether running from src/ (tsx) or dist/src/ (compiled). */
function findRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'Procfile'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root');
    dir = up;
  }
}

export const repoRoot = findRoot();
/** Compiled tree beside this file: migrations and jobs load from the same tree as the code. */
export const codeRoot = path.resolve(__dirname, '..', '..');
