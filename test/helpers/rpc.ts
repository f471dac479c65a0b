/** Raw HTTP calls to the gateway, for asserting on exact statuses and bodies. */

export interface HttpAnswer {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
}

/** One JSON-RPC call with the key in `x-api-key`. */
export async function rpc(url: string, key: string, method: string, params: unknown[] = [], id: unknown = 1): Promise<HttpAnswer> {
  return post(url, { jsonrpc: '2.0', id, method, params }, { 'x-api-key': key });
}

export async function submitBatch(url: string, key: string, transactions: unknown, options: unknown = [], query = ''): Promise<HttpAnswer> {
  return post(`${url}/submit-batch${query}`, { jsonrpc: '2.0', id: 1, params: { transactions, options } }, { 'x-api-key': key });
}

/** One `sendTransaction` of a Base64 transaction with the key in `x-api-key`; `config` adds to `{encoding: 'base64'}`, `headers` to the request's. */
export async function sendTransaction(
  url: string,
  key: string,
  tx: string,
  config: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return post(
    url,
    { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, { encoding: 'base64', ...config }] },
    { 'x-api-key': key, ...headers },
  );
}
