/**
 * `POST /mcp`: the Model Context Protocol over Streamable HTTP (docs/mcp.md), with the official SDK.
 * Stateless: every message gets a server and a transport of its own, answered as JSON, so any of the
 * service's processes can take any message and nothing is kept between them. The API key comes as
 * `x-api-key` or `Authorization: Bearer`; it is checked here (401 without a valid one) and then every
 * tool call goes through the API with it (api-caller.ts), counted, rate-limited and charged there —
 * the MCP message itself is not counted again.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountService } from '../../accounts/accounts.js';
import { presentedApiKey, resolveCaller } from '../auth.js';
import { apiCallerFor } from './api-caller.js';
import { registerPressroomTools } from './mcp-tools.js';

export function mcpRoutes(app: FastifyInstance, deps: { accounts: AccountService; version: string }): void {
  app.post('/mcp', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    // The API's own check (401 as on every route), without counting the message against the rate limit.
    const caller = await resolveCaller(request, 'api_key', deps.accounts);
    const apiKey = presentedApiKey(request)!;
    const server = new McpServer(
      { name: 'pressroom', version: deps.version },
      { capabilities: { tools: {}, resources: {}, prompts: {} } },
    );
    registerPressroomTools(server, { api: apiCallerFor(app, apiKey), accountId: caller.accountId });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  // Stateless: no stream to open (GET) and no session to end (DELETE).
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Method not allowed: this MCP endpoint is stateless; send each message with POST.',
        },
        id: null,
      });
  app.get('/mcp', { schema: { hide: true } }, notAllowed);
  app.delete('/mcp', { schema: { hide: true } }, notAllowed);
}
