/**
 * Group commit: the items of concurrent callers written (or read) by one statement (one round
 * trip, one commit) instead of one each. A call joins the batch being gathered; a batch is written as soon
 * as fewer than `maxInFlight` writes are running, so nothing waits for a timer: a lone caller is
 * written at once, and callers that arrive while a write runs go together in the next one. Each
 * caller gets the results of its own items (`write` answers one result per item, in order). When
 * a batch's write fails, each of its callers' items are written alone, so a bad item fails only
 * its own caller.
 */
export class GroupCommit<I, O> {
  private waiting: { items: I[]; resolve: (o: O[]) => void; reject: (e: unknown) => void }[] = [];
  private running = 0;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly opts: { maxInFlight?: number; maxItems?: number } = {},
  ) {}

  run(items: I[]): Promise<O[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<O[]>((resolve, reject) => {
      this.waiting.push({ items, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.waiting.length > 0 && this.running < (this.opts.maxInFlight ?? 1)) {
      const max = this.opts.maxItems ?? 1000;
      const batch = [this.waiting.shift()!];
      let n = batch[0].items.length;
      while (this.waiting.length > 0 && n + this.waiting[0].items.length <= max) {
        n += this.waiting[0].items.length;
        batch.push(this.waiting.shift()!);
      }
      this.running++;
      void this.flush(batch).finally(() => {
        this.running--;
        this.next();
      });
    }
  }

  private async flush(batch: typeof this.waiting): Promise<void> {
    try {
      const out = await this.write(batch.flatMap((c) => c.items));
      let at = 0;
      for (const c of batch) {
        c.resolve(out.slice(at, at + c.items.length));
        at += c.items.length;
      }
    } catch (e) {
      if (batch.length === 1) return batch[0].reject(e);
      await Promise.all(
        batch.map(async (c) => {
          try {
            c.resolve(await this.write(c.items));
          } catch (err) {
            c.reject(err);
          }
        }),
      );
    }
  }
}
