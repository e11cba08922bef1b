/**
 * Node http/https Agents for customer destinations reached through Node's own HTTP client, chiefly
 * the AWS SDK: `new S3Client({ requestHandler: { httpAgent, httpsAgent } })`.
 *
 * We override `createConnection` rather than pass a `lookup` function: Node skips `lookup` for IP
 * literals, so `https://127.0.0.1` would sail past a lookup-only guard. Here every connection,
 * literal or name, goes through resolveCheckedAddress and the socket is opened to the checked IP.
 * The Agent has already set `servername` from the Host header, so TLS still verifies the name.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { resolveCheckedAddress, type OutboundPolicy } from './resolve-checked-address.js';

/** An http and an https Agent sharing one policy. */
export interface GuardedAgents {
  readonly httpAgent: http.Agent;
  readonly httpsAgent: https.Agent;
  /** Closes idle keep-alive sockets of both agents. */
  destroy(): void;
}

/** Socket pool settings of the guarded agents. */
export interface GuardedAgentOptions {
  /** @defaultValue true */
  readonly keepAlive?: boolean;
  /** Connections per host. @defaultValue 50 (the AWS SDK's own default) */
  readonly maxSockets?: number;
}

// Node's type says a stream always comes back; on error Node ignores it, hence `undefined as never`.
type ConnectionCallback = (err: Error | null, stream: Duplex) => void;
type OpenSocket = (options: http.ClientRequestArgs) => Duplex;

/** Resolves and checks, then lets `open` dial the checked address; reports through `callback`. */
function connectGuarded(
  policy: OutboundPolicy,
  options: http.ClientRequestArgs,
  open: OpenSocket,
  callback?: ConnectionCallback,
): void {
  const host = options.host ?? options.hostname ?? 'localhost';
  resolveCheckedAddress(host, policy).then(
    ({ address }) => {
      let socket: Duplex;
      try {
        // `servername` is already set by the Agent for names; never set it to an IP (TLS forbids it).
        const bare = host.replace(/^\[(.*)\]$/, '$1');
        const servername = (options as { servername?: string }).servername ?? (isIP(bare) === 0 ? bare : undefined);
        socket = open({ ...options, host: address, hostname: address, servername } as http.ClientRequestArgs);
      } catch (error) {
        callback?.(error as Error, undefined as never);
        return;
      }
      callback?.(null, socket);
    },
    (error: Error) => callback?.(error, undefined as never),
  );
}

class GuardedHttpAgent extends http.Agent {
  constructor(
    private readonly policy: OutboundPolicy,
    options: http.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: ConnectionCallback): Duplex | null | undefined {
    // Returning nothing tells the Agent to wait for `callback` (Node's documented async form).
    connectGuarded(this.policy, options, (pinned) => super.createConnection(pinned) as Duplex, callback);
    return undefined;
  }
}

class GuardedHttpsAgent extends https.Agent {
  constructor(
    private readonly policy: OutboundPolicy,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: ConnectionCallback): Duplex | null | undefined {
    connectGuarded(this.policy, options, (pinned) => super.createConnection(pinned) as Duplex, callback);
    return undefined;
  }
}

/** Creates the http/https Agent pair for customer endpoints reached through Node's http client. */
export function createGuardedAgents(policy: OutboundPolicy, options: GuardedAgentOptions = {}): GuardedAgents {
  const agentOptions = { keepAlive: options.keepAlive ?? true, maxSockets: options.maxSockets ?? 50 };
  const httpAgent = new GuardedHttpAgent(policy, agentOptions);
  const httpsAgent = new GuardedHttpsAgent(policy, agentOptions);
  return {
    httpAgent,
    httpsAgent,
    destroy() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
