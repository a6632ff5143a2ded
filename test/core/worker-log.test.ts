import { Writable } from 'stream';
import pino from 'pino';
import { expect } from 'chai';
import { workerLogger } from '../../src/worker-log';

describe("graphile-worker's log lines go through pino (one JSON stream)", () => {
  it('each level is a JSON line at the matching pino level, with the scope and metadata', () => {
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const logger = workerLogger(pino({ level: 'debug', base: undefined }, sink)).scope({
      label: 'job',
      workerId: 'w1',
    });
    logger.error('Failed task 42', { failure: true });
    logger.warn('slow');
    logger.info('started');
    logger.debug('polling');
    expect(lines.map((l) => [l.level, l.msg])).to.deep.equal([
      [50, 'Failed task 42'],
      [40, 'slow'],
      [30, 'started'],
      [20, 'polling'],
    ]);
    expect(lines[0].worker).to.deep.equal({ label: 'job', workerId: 'w1' });
    expect(lines[0].failure).to.equal(true);
  });
});
