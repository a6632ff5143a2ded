import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { apiRoutes } from '../../src/routes';

describe('docs/limits.md: the read budget names the reads the read policy counts', function () {
  it('its read rows list exactly the routes limited by the read policy', () => {
    const md = fs.readFileSync(path.resolve(__dirname, '../../docs/limits.md'), 'utf8');
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && /read budget/.test(l.split('|')[1]));
    expect(rows).to.have.length(2);
    const listed = rows.flatMap((r) => [...r.split('|')[1].matchAll(/`GET (\/[^`]+)`/g)].map((m) => `GET ${m[1]}`));
    const counted = apiRoutes()
      .filter((r) => [r.rateLimit ?? []].flat().includes('read'))
      .map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect([...listed].sort()).to.deep.equal([...counted].sort());
  });
});
