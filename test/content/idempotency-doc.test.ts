import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { buildOpenApi } from '../../src/http/openapi';
import { apiRoutes } from '../../src/routes';
import { getContext } from '../helpers/context';

describe('docs/api.md: the Idempotency section lists the operations that accept Idempotency-Key', function () {
  it('names exactly the operations whose OpenAPI entry has the Idempotency-Key header parameter', async () => {
    const { config } = await getContext();
    const doc: any = buildOpenApi(apiRoutes(), config);
    const accepting: string[] = [];
    for (const [p, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item))
        if ((op?.parameters ?? []).some((x: any) => x.in === 'header' && /^idempotency-key$/i.test(x.name)))
          accepting.push(`${method.toUpperCase()} ${p.replace(/^\/api\/v1/, '')}`);
    const md = fs.readFileSync(path.resolve(__dirname, '../../docs/api.md'), 'utf8');
    const start = md.indexOf('\n## Idempotency\n');
    expect(start).to.be.greaterThan(-1);
    const section = md.slice(start, md.indexOf('\n## ', start + 5));
    const listed = [...section.matchAll(/`(GET|POST|PATCH|PUT|DELETE) (\/[^`]*)`/g)].map((m) => `${m[1]} ${m[2]}`);
    expect(accepting.length).to.be.greaterThan(10);
    expect([...listed].sort()).to.deep.equal([...accepting].sort());
  });
});
