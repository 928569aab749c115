import { afterEach, describe, expect, it } from 'vitest';
import { HttpServers } from '../../src/ops/http-servers.js';
import { silentLogger } from '../../src/util/logger.js';

describe('HttpServers prefix routes', () => {
  const servers = new HttpServers(silentLogger());
  const listen = '127.0.0.1:0';
  afterEach(async () => {
    for (const path of ['/', '/console/', '/console/deep/', '/healthz']) await servers.unmount(listen, path);
  });

  it('routes a prefix and everything below it (longest prefix first), exact routes first, nothing else', async () => {
    const answer = (name: string) => (_req: unknown, res: import('node:http').ServerResponse) => void res.end(name);
    servers.mount(listen, '/healthz', answer('healthz'));
    servers.mount(listen, '/', answer('root'));
    servers.mountPrefix(listen, '/console/', answer('console'));
    servers.mountPrefix(listen, '/console/deep/', answer('deep'));
    expect(() => servers.mountPrefix(listen, '/console', answer('x'))).toThrow(/must end in \//);
    const { port } = await servers.listen(listen);
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return response.status === 404 ? 404 : await response.text();
    };
    expect(await get('/')).toBe('root');
    expect(await get('/healthz')).toBe('healthz');
    expect(await get('/console')).toBe('console');
    expect(await get('/console/')).toBe('console');
    expect(await get('/console/streams/loads?x=1')).toBe('console');
    expect(await get('/console/deep/x')).toBe('deep');
    expect(await get('/consolex')).toBe(404);
    expect(await get('/other')).toBe(404);
  });
});
