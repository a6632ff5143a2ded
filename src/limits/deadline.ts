/**
 * `p`, or a rejection with `message` once `ms` have passed and its answer still has not been read.
 *
 * A plain timer is wrong on a busy process: when the event loop was blocked past `ms` (a burst of
 * requests, a long synchronous task), the expired timer runs before the I/O that carries the
 * answer, so a server that answered in a millisecond is reported timed out. Here the timer only
 * arms the verdict: it is given after the I/O waiting in that loop turn has been read
 * (`setImmediate` runs after the poll phase), so only an answer that truly has not arrived fails.
 */
export function withDeadline<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          reject(new Error(message));
        }),
      ms,
    );
    p.then(
      (v) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/**
 * The command timeout left to the Redis client itself: only a backstop that frees commands a
 * stalled server never answers. The verdict is `withDeadline`'s, at the configured timeout; the
 * client's own timer fires before pending I/O is read, so at the configured timeout it would fail
 * answered commands whenever the event loop lags past it.
 */
export function clientBackstopMs(timeoutMs: number): number {
  return Math.max(1000, 4 * timeoutMs);
}
