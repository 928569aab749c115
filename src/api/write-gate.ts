import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** What opens a request: node:http's `request`, as http-exchange.ts and axios (its `transport` option) call it. */
export interface RequestTransport {
  request(options: http.RequestOptions, onResponse: (response: http.IncomingMessage) => void): http.ClientRequest;
}

/**
 * The errors a gate's check threw: the transport hands them back as they are, so a request that
 * never left is not mistaken for one whose outcome is unknown.
 */
const refusals = new WeakSet<object>();

export function refusedByGate(error: unknown): error is Error {
  return typeof error === 'object' && error !== null && refusals.has(error);
}

/**
 * A transport that runs `check` at the last moment a request can still be held back: right before
 * its bytes are written to a connected socket (TLS: after the handshake). A check before handing
 * the request to the HTTP layer is not enough: the request may then wait for a free socket of the agent,
 * for a TCP connect or a TLS handshake, or the process may be stopped (SIGSTOP, a VM pause) in
 * between, and after it resumes I/O callbacks can run before any timer noticed the pause. Here the
 * check and the write happen in one synchronous run: nothing can come between them but the pause
 * of the whole process inside those few instructions.
 *
 * When `check` throws, the request is destroyed unsent and fails with that very error.
 * `timeoutMs` bounds the wait for a connection by the wall clock, as the transport does for
 * ungated requests (a socket's idle timeout does not run while TCP connect is pending).
 */
export function gatedTransport(check: () => void, timeoutMs: number): RequestTransport {
  return {
    request(options, onResponse) {
      const request = options.protocol === 'https:' ? https.request(options, onResponse) : http.request(options, onResponse);
      const connectTimer = setTimeout(() => {
        request.destroy(Object.assign(new Error(`timeout of ${timeoutMs}ms exceeded while connecting`), { code: 'ETIMEDOUT' }));
      }, timeoutMs);
      const clearTimer = () => clearTimeout(connectTimer);
      request.once('response', clearTimer);
      request.once('close', clearTimer);
      // Node emits 'socket' and then, synchronously, writes the buffered request to the socket.
      request.once('socket', (socket: Socket) => holdUntilWritable(request, socket, check));
      return request;
    },
  };
}

function holdUntilWritable(request: http.ClientRequest, socket: Socket, check: () => void): void {
  const passes = (): boolean => {
    try {
      check();
      return true;
    } catch (error) {
      if (typeof error === 'object' && error !== null) refusals.add(error);
      socket.cork();
      request.destroy(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  };
  if (!stillConnecting(socket)) {
    passes();
    return;
  }
  // A new connection: Node would hand the bytes to the socket now and the socket would send them
  // the moment it connects, with no JavaScript in between. Corked, they wait for us instead.
  socket.cork();
  socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
    if (passes()) socket.uncork();
  });
}

/**
 * TCP connect pending, or (TLS) our side of the handshake not finished: `getFinished()` is
 * undefined until this side sent its Finished message (`getProtocol()` names a version earlier).
 * A new socket is still connecting when the request gets it; the TLS test is for a socket handed
 * over between connect and handshake, which Node's agent does not do today.
 */
function stillConnecting(socket: Socket): boolean {
  if (socket.connecting) return true;
  return socket instanceof TLSSocket && socket.getFinished() === undefined;
}
