/**
 * n8n's own runtime packages (n8n-core and n8n-workflow 1.x, installed under integrations/n8n by
 * `scripts/setup.sh --test`) running the community package integrations/n8n the way an n8n server
 * does: loaded by n8n's PackageDirectoryLoader from its package.json, a workflow run by WorkflowExecute,
 * the editor's option lists by LoadOptionsContext, the credential test by RoutingNode (as n8n's
 * credentials tester runs a credential's `test` request), and a webhook by WebhookContext behind an
 * HTTP server on loopback. What an n8n server adds around them, and this file stands in for: the
 * stored credential (given here in clear) and applying the credential's `authenticate` block.
 * The n8n packages have no types in the root project (they live in the integration's node_modules), so
 * the few shapes used here are declared loosely.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const N8N_PACKAGE_DIR = fileURLToPath(new URL('../../integrations/n8n/', import.meta.url));
const PACKAGE_NAME = 'n8n-nodes-pressroom';
/** A webhook body larger than this is refused by the stand-in server (n8n's own default cap is 16 MiB). */
const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

type Any = any;

export interface N8nItem {
  json: Record<string, Any>;
  binary?: Record<string, { data: string; mimeType: string; fileName?: string; fileSize?: string }>;
}

export interface N8nNodeSpec {
  name: string;
  /** The node's type without the package prefix: `pressroom` or `pressroomTrigger`. */
  type: string;
  parameters: Record<string, Any>;
}

export interface ReceivedWebhook {
  status: number;
  /** The items the trigger started the workflow with; none when it refused or ignored the call. */
  items: N8nItem[];
}

/** Loads n8n's packages from integrations/n8n, or fails saying how to install them: nothing is skipped. */
function loadN8nPackages(): { core: Any; workflow: Any } {
  const require = createRequire(join(N8N_PACKAGE_DIR, 'package.json'));
  try {
    return { core: require('n8n-core'), workflow: require('n8n-workflow') };
  } catch (error) {
    throw new Error(
      `n8n's runtime packages are not installed under integrations/n8n (${(error as Error).message.split('\n')[0]}): ` +
        'run `bash scripts/setup.sh --test`, or `cd integrations/n8n && npm ci --ignore-scripts && npm run build`',
    );
  }
}

function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Compiles the package into its dist/ when a source is newer than the compiled node (as test/support/build-dist.mjs does for the server). */
function buildPackageIfStale(): void {
  const built = join(N8N_PACKAGE_DIR, 'dist', 'nodes', 'Pressroom', 'Pressroom.node.js');
  const newest = Math.max(
    newestSourceMs(join(N8N_PACKAGE_DIR, 'nodes')),
    newestSourceMs(join(N8N_PACKAGE_DIR, 'credentials')),
  );
  if (existsSync(built) && statSync(built).mtimeMs >= newest) return;
  execFileSync(
    process.execPath,
    [join(N8N_PACKAGE_DIR, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
    { cwd: N8N_PACKAGE_DIR, stdio: 'inherit' },
  );
  execFileSync(process.execPath, ['scripts/copy-icons.mjs'], { cwd: N8N_PACKAGE_DIR, stdio: 'inherit' });
}

/** n8n's runtime with the package loaded; `credentials` is the `pressroomApi` credential the nodes get. */
export class N8nRuntime {
  credentials: Record<string, string> = {};
  private readonly servers: Server[] = [];

  private constructor(
    private readonly core: Any,
    private readonly workflowLib: Any,
    private readonly loader: Any,
    private readonly userFolder: string,
  ) {}

  static async start(): Promise<N8nRuntime> {
    // n8n keeps its settings file (and encryption key) under N8N_USER_FOLDER: a throwaway one, not ~/.n8n.
    const userFolder = mkdtempSync(join(tmpdir(), 'pressroom-n8n-'));
    process.env.N8N_USER_FOLDER = userFolder;
    process.env.N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS = 'false';
    const { core, workflow } = loadN8nPackages();
    buildPackageIfStale();
    const loader = new core.PackageDirectoryLoader(N8N_PACKAGE_DIR);
    await loader.loadAll();
    return new N8nRuntime(core, workflow, loader, userFolder);
  }

  /** The names n8n lists the package's nodes and credentials under. */
  get known(): { nodes: string[]; credentials: string[] } {
    return {
      nodes: Object.keys(this.loader.nodeTypes).map((n) => `${PACKAGE_NAME}.${n}`),
      credentials: Object.keys(this.loader.credentialTypes),
    };
  }

  async close(): Promise<void> {
    for (const server of this.servers) await new Promise((resolve) => server.close(resolve));
    rmSync(this.userFolder, { recursive: true, force: true });
  }

  private nodeType(name: string): Any {
    const short = name.startsWith(`${PACKAGE_NAME}.`) ? name.slice(PACKAGE_NAME.length + 1) : name;
    const entry = this.loader.nodeTypes[short];
    if (!entry) throw new Error(`the package has no node ${name}`);
    return entry.type;
  }

  private nodeTypes(extra: Record<string, Any> = {}): Any {
    return {
      getByName: (name: string) => extra[name] ?? this.nodeType(name),
      getByNameAndVersion: (name: string, version?: number) =>
        this.workflowLib.NodeHelpers.getVersionedNodeType(extra[name] ?? this.nodeType(name), version),
      getKnownTypes: () => ({}),
    };
  }

  private node(spec: N8nNodeSpec, index = 0): Any {
    return {
      id: `node-${index}`,
      name: spec.name,
      type: `${PACKAGE_NAME}.${spec.type}`,
      typeVersion: 1,
      position: [index * 220, 0],
      parameters: spec.parameters,
      credentials: { pressroomApi: { id: 'credential-1', name: 'Pressroom' } },
    };
  }

  /** What n8n's credentials helper does for this package: hands out the stored credential and applies `authenticate`. */
  private credentialsHelper(): Any {
    const types = this.loader.credentialTypes;
    const runtime = this;
    return {
      getParentTypes: () => [],
      getCredentialsProperties: (type: string) => types[type].type.properties,
      getDecrypted: async () => ({ ...runtime.credentials }),
      getCredentials: async () =>
        new runtime.core.Credentials({ id: 'credential-1', name: 'Pressroom' }, 'pressroomApi', ''),
      preAuthentication: async () => undefined,
      runPreAuthentication: async () => undefined,
      updateCredentials: async () => undefined,
      updateCredentialsOauthTokenData: async () => undefined,
      isCredentialUsableByNode: () => true,
      async authenticate(credentials: Record<string, Any>, typeName: string, request: Any, workflow: Any, node: Any) {
        const { authenticate } = types[typeName].type;
        if (authenticate?.type !== 'generic') return request;
        // As n8n's CLI does: each generic property is an expression over $credentials, resolved by the workflow's expression engine.
        const resolve = (value: string) =>
          String(
            workflow.expression.getSimpleParameterValue(
              node,
              value,
              'internal',
              { $credentials: credentials },
              undefined,
              '',
            ) ?? '',
          );
        for (const [where, entries] of Object.entries(
          authenticate.properties as Record<string, Record<string, string>>,
        )) {
          request[where] = request[where] ?? {};
          for (const [key, value] of Object.entries(entries)) request[where][resolve(key)] = resolve(value);
        }
        return request;
      },
    };
  }

  private additionalData(extra: Record<string, Any> = {}): Any {
    return {
      credentialsHelper: this.credentialsHelper(),
      executeWorkflow: async () => {
        throw new Error('sub-workflows are not part of these tests');
      },
      getRunExecutionData: async () => undefined,
      currentNodeExecutionIndex: 0,
      restApiUrl: 'http://127.0.0.1/rest',
      instanceBaseUrl: 'http://127.0.0.1/',
      formWaitingBaseUrl: 'http://127.0.0.1/form-waiting',
      webhookBaseUrl: 'http://127.0.0.1/webhook',
      webhookWaitingBaseUrl: 'http://127.0.0.1/webhook-waiting',
      webhookTestBaseUrl: 'http://127.0.0.1/webhook-test',
      variables: {},
      logAiEvent: () => undefined,
      ...extra,
    };
  }

  private workflow(nodes: Any[], connections: Any = {}, nodeTypes = this.nodeTypes()): Any {
    return new this.workflowLib.Workflow({
      id: 'workflow-1',
      name: 'test',
      nodes,
      connections,
      active: false,
      nodeTypes,
      settings: { executionOrder: 'v1' },
    });
  }

  /** The credential test as n8n runs one: the credential's `test` request through RoutingNode, with the stored credential. */
  async testCredential(): Promise<{ status: 'OK' | 'Error'; message: string }> {
    const credentialType = this.loader.credentialTypes.pressroomApi.type;
    const testType = {
      description: {
        displayName: 'Credential test',
        name: 'credentialTest',
        group: [],
        version: 1,
        description: '',
        defaults: {},
        inputs: ['main'],
        outputs: ['main'],
        credentials: [{ name: 'pressroomApi', required: true }],
        properties: [
          {
            displayName: 'Temp',
            name: 'temp',
            type: 'string',
            default: '',
            routing: { request: credentialType.test.request },
          },
        ],
      },
    };
    const node = {
      id: 'temp',
      name: 'Temp-Node',
      type: 'credentialTest',
      typeVersion: 1,
      position: [0, 0],
      parameters: {},
      credentials: { pressroomApi: { id: 'credential-1', name: 'Pressroom' } },
    };
    const workflow = this.workflow([node], {}, this.nodeTypes({ credentialTest: testType }));
    const context = new this.core.ExecuteContext(
      workflow,
      node,
      this.additionalData(),
      'internal',
      { resultData: { runData: {} } },
      0,
      [],
      { main: [[{ json: {} }]] },
      { node, data: {}, source: null },
      [],
    );
    const decrypted = { id: 'credential-1', name: 'Pressroom', type: 'pressroomApi', data: { ...this.credentials } };
    try {
      const output = await new this.core.RoutingNode(context, testType, decrypted).runNode();
      // As n8n's tester: a `responseSuccessBody` rule fails the test when the answer's `key` holds `value`.
      const answer = output?.[0]?.[0]?.json ?? {};
      for (const rule of credentialType.test.rules ?? []) {
        const held = String(rule.properties.key)
          .split('.')
          .reduce((value: Any, key: string) => value?.[key], answer);
        if (rule.type === 'responseSuccessBody' && held === rule.properties.value)
          return { status: 'Error', message: rule.properties.message };
      }
      return { status: 'OK', message: 'Connection successful!' };
    } catch (error) {
      const { httpCode, message } = error as { httpCode?: string | null; message: string };
      return { status: 'Error', message: httpCode ? `HTTP ${httpCode}: ${message}` : message };
    }
  }

  /** A `loadOptionsMethod` of the node, as the editor calls it with the node's current parameters. */
  async loadOptions(
    method: string,
    parameters: Record<string, Any>,
  ): Promise<Array<{ name: string; value: string | number; description?: string }>> {
    const context = this.editorContext(parameters);
    return this.nodeType('pressroom').methods.loadOptions[method].call(context);
  }

  /** A resource mapper's fields, as the editor asks for them with the node's current parameters. */
  async resourceMapperFields(
    method: string,
    parameters: Record<string, Any>,
  ): Promise<{ fields: Array<Record<string, Any>>; emptyFieldsNotice?: string }> {
    const context = this.editorContext(parameters);
    return this.nodeType('pressroom').methods.resourceMapping[method].call(context);
  }

  private editorContext(parameters: Record<string, Any>): Any {
    const node = this.node({ name: 'Pressroom', type: 'pressroom', parameters });
    return new this.core.LoadOptionsContext(
      this.workflow([node]),
      node,
      this.additionalData({ currentNodeParameters: parameters }),
      'parameters',
    );
  }

  /**
   * Runs `nodes` as one workflow, each fed by the one before; the first gets `input` as a trigger would
   * hand it over. Answers each node's output items, or the error that stopped the run.
   */
  async run(
    nodes: N8nNodeSpec[],
    input: N8nItem[] = [{ json: {} }],
  ): Promise<{ outputs: Record<string, N8nItem[]>; error?: string }> {
    const built = nodes.map((spec, index) => this.node(spec, index));
    const connections: Record<string, Any> = {};
    for (let i = 0; i + 1 < built.length; i++)
      connections[built[i].name] = { main: [[{ node: built[i + 1].name, type: 'main', index: 0 }]] };
    const workflow = this.workflow(built, connections);
    const hooks = new this.core.ExecutionLifecycleHooks('manual', 'execution-1', {
      id: 'workflow-1',
      name: 'test',
      nodes: built,
      connections,
      active: false,
      settings: {},
    });
    const finished = this.workflowLib.createDeferredPromise();
    hooks.addHandler('workflowExecuteAfter', (run: Any) => finished.resolve(run));
    const runExecutionData = {
      resultData: { runData: {} },
      executionData: {
        contextData: {},
        metadata: {},
        waitingExecution: {},
        waitingExecutionSource: null,
        nodeExecutionStack: [{ node: built[0], data: { main: [input] }, source: null }],
      },
    };
    await new this.core.WorkflowExecute(
      this.additionalData({ hooks, executionId: 'execution-1' }),
      'manual',
      runExecutionData,
    ).processRunExecutionData(workflow);
    const run = await finished.promise;
    const outputs: Record<string, N8nItem[]> = {};
    for (const [name, tasks] of Object.entries(run.data.resultData.runData as Record<string, Any[]>))
      outputs[name] = tasks[0]?.data?.main?.[0] ?? [];
    const error = run.data.resultData.error;
    return {
      outputs,
      error: error ? String(error.description ? `${error.message} — ${error.description}` : error.message) : undefined,
    };
  }

  /**
   * Serves the trigger node `spec` on loopback as n8n's webhook server would: the raw body kept in
   * `rawBody`, the node's `webhook()` run in a WebhookContext, its answer (or its own refusal) sent back.
   * Answers the URL to give Pressroom and the list of calls received so far.
   */
  async serveTrigger(spec: N8nNodeSpec): Promise<{ url: string; received: ReceivedWebhook[] }> {
    const node = this.node(spec);
    const workflow = this.workflow([node]);
    const nodeType = this.nodeType(spec.type);
    const received: ReceivedWebhook[] = [];
    const server = createServer((req, res) => {
      void this.handleWebhook({ req, res, workflow, node, nodeType }).then(
        (call) => received.push(call),
        (error: Error) => {
          received.push({ status: 500, items: [] });
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: error.message }));
        },
      );
    });
    this.servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}/webhook/test-webhook-id/pressroom`, received };
  }

  private async handleWebhook(call: {
    req: IncomingMessage;
    res: ServerResponse;
    workflow: Any;
    node: Any;
    nodeType: Any;
  }): Promise<ReceivedWebhook> {
    const { req, res } = call;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_WEBHOOK_BODY_BYTES) throw new Error('webhook body too large');
      chunks.push(chunk as Buffer);
    }
    const rawBody = Buffer.concat(chunks);
    Object.assign(req, {
      rawBody,
      body: rawBody.length > 0 ? JSON.parse(rawBody.toString('utf8')) : {},
      query: {},
      params: {},
    });
    const description = call.nodeType.description.webhooks[0];
    const additionalData = this.additionalData({ httpRequest: req, httpResponse: res });
    const webhookData = {
      httpMethod: 'POST',
      node: call.node.name,
      path: description.path,
      webhookDescription: description,
      workflowId: 'workflow-1',
      workflowExecuteAdditionalData: additionalData,
      webhookId: 'test-webhook-id',
    };
    const context = new this.core.WebhookContext(
      call.workflow,
      call.node,
      additionalData,
      'webhook',
      webhookData,
      [],
      null,
    );
    const result = await call.nodeType.webhook.call(context);
    if (result.noWebhookResponse) return { status: res.statusCode, items: [] };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(result.webhookResponse ?? { message: 'Workflow was started' }));
    return { status: 200, items: result.workflowData?.[0] ?? [] };
  }
}

/** The bytes of binary property `property` of an item, as n8n keeps them in memory (base64). */
export function binaryBytes(item: N8nItem | undefined, property = 'data'): Buffer {
  const binary = item?.binary?.[property];
  if (!binary) throw new Error(`the item has no binary property "${property}": ${JSON.stringify(item?.json)}`);
  return Buffer.from(binary.data, 'base64');
}
