/**
 * The small part of `tarn` that Kysely's MssqlDialect uses (`acquire().promise`, `release`,
 * `destroy`), so SQL Server needs no extra dependency. Connections are created on demand up to
 * `max`; waiters are served first-come first-served; a connection failing `validate` is replaced.
 */
export interface MiniPoolOptions<R> {
  readonly max: number;
  readonly min?: number;
  create(): Promise<R>;
  destroy(resource: R): unknown;
  validate?(resource: R): boolean | Promise<boolean>;
}

interface Waiter<R> {
  resolve(resource: R): void;
  reject(error: Error): void;
}

export class MiniPool<R> {
  private readonly idle: R[] = [];
  private readonly waiters: Waiter<R>[] = [];
  private size = 0;
  private destroyed = false;

  constructor(private readonly options: MiniPoolOptions<R>) {}

  acquire(): { promise: Promise<R> } {
    return { promise: this.take() };
  }

  private async take(): Promise<R> {
    if (this.destroyed) throw new Error('connection pool is destroyed');
    while (this.idle.length > 0) {
      const resource = this.idle.pop()!;
      if (!this.options.validate || (await this.options.validate(resource))) return resource;
      this.size -= 1;
      await this.options.destroy(resource);
    }
    if (this.size < this.options.max) {
      this.size += 1;
      try {
        return await this.options.create();
      } catch (error) {
        this.size -= 1;
        throw error;
      }
    }
    return new Promise<R>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  release(resource: R): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(resource);
    else this.idle.push(resource);
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('connection pool is destroyed'));
    const idle = this.idle.splice(0);
    this.size -= idle.length;
    await Promise.all(idle.map((r) => this.options.destroy(r)));
  }
}
