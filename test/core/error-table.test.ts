import { expect } from 'chai';
import { ERRORS, statusOf, AppError, type ErrorCode } from '../../src/errors';
import { errorResponses } from '../../src/http/openapi';
import { apiRoutes } from '../../src/routes';
import { openApiDocument } from '../../clients/typescript/scripts/generate-types';

const CODES = Object.keys(ERRORS) as ErrorCode[];

describe('the error table', () => {
  it('an AppError answers with its code’s status and default message unless given one', () => {
    const e = new AppError('SELF_VOTE_FORBIDDEN');
    expect([e.status, e.code, e.message]).to.deep.equal([
      400,
      'SELF_VOTE_FORBIDDEN',
      ERRORS.SELF_VOTE_FORBIDDEN.message,
    ]);
    expect(new AppError('NOT_FOUND', 'Post not found').status).to.equal(404);
    expect(new AppError('RATE_LIMITED').status).to.equal(429);
  });

  it('every code is upper snake case with a 4xx/5xx status and a message', () => {
    for (const code of CODES) {
      expect(code).to.match(/^[A-Z][A-Z0-9_]+$/);
      expect(statusOf(code), code).to.be.within(400, 599);
      expect(ERRORS[code].message, code).to.be.a('string').and.not.equal('');
    }
  });

  it('each route documents its codes under the status the table gives them', () => {
    for (const r of apiRoutes())
      for (const [status, { description }] of Object.entries(errorResponses(r)))
        for (const [, code] of description.matchAll(/(?:^|, )([A-Z][A-Z0-9_]+)(?= \(|,|$)/g)) {
          expect(code in ERRORS, `${r.operationId}: ${code} is in the table`).to.equal(true);
          expect(statusOf(code as ErrorCode), `${r.operationId}: ${code} under ${status}`).to.equal(Number(status));
        }
  });

  it('the served document lists every declared code, and VALIDATION_FAILED wherever a query or body is validated', () => {
    const doc = openApiDocument() as {
      paths: Record<
        string,
        Record<string, { operationId: string; responses: Record<string, { description: string }> }>
      >;
    };
    const ops = new Map(
      Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => [op.operationId, op])),
    );
    for (const r of apiRoutes()) {
      const op = ops.get(r.operationId)!;
      for (const code of Object.keys(r.errors ?? {}) as ErrorCode[])
        expect(op.responses[statusOf(code)]?.description, `${r.operationId} ${code}`).to.include(code);
      if (r.body || r.query) expect(op.responses['400'].description, r.operationId).to.include('VALIDATION_FAILED');
      // Every 429 documents Retry-After.
      if (op.responses['429']) expect(op.responses['429']).to.have.nested.property('headers.Retry-After');
    }
  });
});
