import { describe, expect, it } from 'vitest';
import { DaemonFailedError, startDaemon, type DaemonService } from '../../src/app/daemon.js';
import { silentLogger } from '../../src/util/logger.js';
import { capturingLogger } from '../helpers/log-capture.js';

/** A controllable fake service: its loops end (or die) when the test says so; every call is logged. */
interface FakeService extends DaemonService {
  /** Makes the service's loops reject (as a supervised loop that gave up would). */
  die(error: unknown): void;
  readonly stops: number;
}

function fakeService(name: string, log: string[], options: { startError?: unknown; beforeStart?: () => Promise<void> } = {}): FakeService {
  let fail!: (error: unknown) => void;
  let end!: () => void;
  let stops = 0;
  return {
    name,
    get stops() {
      return stops;
    },
    async start() {
      log.push(`start ${name}`);
      await options.beforeStart?.();
      if (options.startError !== undefined) throw options.startError;
      const loops = new Promise<void>((resolve, reject) => {
        end = resolve;
        fail = reject;
      });
      return { loops };
    },
    async stop() {
      stops += 1;
      log.push(`stop ${name}`);
      // Stopping takes a moment, so an overlapping second stop would show in the log.
      await new Promise((r) => setTimeout(r, 5));
      end?.();
    },
    die(error: unknown) {
      fail(error);
    },
  };
}

const logger = silentLogger();

describe('startDaemon (the runner handle)', () => {
  it('a service whose loops reject makes `promise` reject naming it and the cause; every started service is stopped in reverse order', async () => {
    const log: string[] = [];
    const services = [fakeService('ops-http', log), fakeService('outbound', log), fakeService('scheduler', log)];
    const runner = await startDaemon({ services, logger });
    const failed: Array<[string, unknown]> = [];
    const stopping: string[] = [];
    const stopped: unknown[] = [];
    runner.events.on('service:failed', (name, error) => failed.push([name, error]));
    runner.events.on('stopping', (reason) => stopping.push(reason));
    runner.events.on('stopped', (error) => stopped.push(error));

    const cause = new Error('outbound dispatcher stopped after 3 failures in a row: SQLITE_IOERR: disk I/O error');
    services[1]!.die(cause);
    const error = await runner.promise.then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(DaemonFailedError);
    expect((error as DaemonFailedError).service).toBe('outbound');
    expect((error as Error).message).toBe('service outbound failed: outbound dispatcher stopped after 3 failures in a row: SQLITE_IOERR: disk I/O error');
    expect((error as Error).cause).toBe(cause);
    expect(log).toEqual(['start ops-http', 'start outbound', 'start scheduler', 'stop scheduler', 'stop outbound', 'stop ops-http']);
    expect(failed).toEqual([['outbound', cause]]);
    expect(stopping).toEqual(['service outbound failed']);
    expect(stopped).toEqual([error]);
    // A stop requested afterwards does not stop anything again and does not throw.
    await runner.stop();
    expect(services.map((s) => s.stops)).toEqual([1, 1, 1]);
  });

  it('two services dying: the first failure is the one reported, and the services are still stopped once', async () => {
    const log: string[] = [];
    const services = [fakeService('webhooks', log), fakeService('outbound', log)];
    const runner = await startDaemon({ services, logger });
    services[0]!.die(new Error('inbox broken'));
    services[1]!.die(new Error('outbox broken'));
    await expect(runner.promise).rejects.toThrow('service webhooks failed: inbox broken');
    expect(services.map((s) => s.stops)).toEqual([1, 1]);
  });

  it('stop() drains in reverse start order and `promise` resolves', async () => {
    const log: string[] = [];
    const services = [fakeService('ops-http', log), fakeService('webhooks', log), fakeService('outbound', log), fakeService('scheduler', log)];
    const runner = await startDaemon({ services, logger });
    const stopped: unknown[] = [];
    runner.events.on('stopped', (error) => stopped.push(error));
    let settled = false;
    void runner.promise.finally(() => (settled = true)).catch(() => undefined);
    await Promise.resolve();
    expect(settled).toBe(false);

    await runner.stop('test');
    await expect(runner.promise).resolves.toBeUndefined();
    expect(log.slice(4)).toEqual(['stop scheduler', 'stop outbound', 'stop webhooks', 'stop ops-http']);
    expect(stopped).toEqual([undefined]);
  });

  it('a start() that throws stops the services already started, in reverse, and startDaemon rejects', async () => {
    const log: string[] = [];
    const cause = new Error('cannot listen on 127.0.0.1:1: EACCES');
    const later = fakeService('scheduler', log);
    const services = [fakeService('ops-http', log), fakeService('webhooks', log), fakeService('outbound', log, { startError: cause }), later];
    const error = await startDaemon({ services, logger }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DaemonFailedError);
    expect((error as Error).message).toBe('service outbound failed: cannot listen on 127.0.0.1:1: EACCES');
    expect(log).toEqual(['start ops-http', 'start webhooks', 'start outbound', 'stop webhooks', 'stop ops-http']);
    // The failed one is not stopped (it never started), the later one never started.
    expect(services[2]!.stops).toBe(0);
    expect(later.stops).toBe(0);
  });

  it('stop() called twice (also concurrently) stops every service once', async () => {
    const log: string[] = [];
    const services = [fakeService('ops-http', log), fakeService('outbound', log)];
    const runner = await startDaemon({ services, logger });
    await Promise.all([runner.stop('first'), runner.stop('second')]);
    await runner.stop('third');
    await expect(runner.promise).resolves.toBeUndefined();
    expect(services.map((s) => s.stops)).toEqual([1, 1]);
    expect(log.filter((l) => l.startsWith('stop'))).toEqual(['stop outbound', 'stop ops-http']);
  });

  it('a service that dies while a later one is still starting: the later one is stopped too and startDaemon rejects', async () => {
    const log: string[] = [];
    let release!: () => void;
    const slowStart = new Promise<void>((r) => (release = r));
    const first = fakeService('webhooks', log);
    const second = fakeService('outbound', log, { beforeStart: () => slowStart });
    const third = fakeService('scheduler', log);
    const starting = startDaemon({ services: [first, second, third], logger });
    // `first` is up and `second` is starting: first's loop dies now.
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['start webhooks', 'start outbound']);
    first.die(new Error('inbox broken'));
    await new Promise((r) => setTimeout(r, 20));
    release();
    const error = await starting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error | undefined)?.message).toBe('service webhooks failed: inbox broken');
    // Nothing is left running: the service that finished starting after the failure is stopped,
    // and no further service is started.
    expect(first.stops).toBe(1);
    expect(second.stops).toBe(1);
    expect(log).not.toContain('start scheduler');
  });

  it("names what it stops (an account's work, not the daemon) and logs an expected failure such as a lost lease as a warning", async () => {
    const log: string[] = [];
    const captured = capturingLogger('info');
    class LeaseGone extends Error {}
    const services = [fakeService('webhooks', log), fakeService('scheduler', log)];
    const runner = await startDaemon({ services, logger: captured.logger, scope: 'the work of account a03', isExpectedFailure: (e) => e instanceof LeaseGone });
    services[0]!.die(new LeaseGone('lease of account a03 lost (epoch 3)'));
    await runner.promise.catch(() => undefined);
    const entries = captured.lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    const stopLine = entries.find((e) => e.msg.includes('stopping'));
    expect(stopLine?.msg).toBe('service webhooks stopped: lease of account a03 lost (epoch 3); stopping the work of account a03');
    expect(stopLine?.level).toBe(40);
    expect(entries.some((e) => e.level >= 50)).toBe(false);
    expect(captured.text()).not.toContain('stopping the daemon');

    // Any other failure is still an error, naming the scope.
    const other = capturingLogger('info');
    const more = [fakeService('outbound', log)];
    const second = await startDaemon({ services: more, logger: other.logger, scope: 'the work of account a03', isExpectedFailure: (e) => e instanceof LeaseGone });
    more[0]!.die(new Error('disk I/O error'));
    await second.promise.catch(() => undefined);
    const failure = other.lines.map((line) => JSON.parse(line) as { level: number; msg: string }).find((e) => e.msg.includes('stopping'));
    expect(failure).toMatchObject({ level: 50, msg: 'service outbound failed: stopping the work of account a03' });
  });
});
