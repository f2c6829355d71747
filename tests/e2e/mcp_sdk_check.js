// SPDX-License-Identifier: MIT
// The official TypeScript SDK's client against `ingero-ftrace mcp`:
//   node mcp_sdk_check.js NPM_DIR IFT TRACE [STACKS_TRACE]
// connects through StdioClientTransport, lists tools and prompts, gets the
// prompt, calls every tool (the SDK checks structuredContent against each
// tool's outputSchema) and a bad call of each kind; get_stacks on TRACE (no
// stacks: an error) and on STACKS_TRACE (one with call sites); exits 1 on a
// mismatch.
'use strict';
const path = require('path');
const { createRequire } = require('module');

const [npmDir, ift, trace, stacksTrace] = process.argv.slice(2);
const req = createRequire(path.join(path.resolve(npmDir), 'package.json'));
const { Client } = req('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = req('@modelcontextprotocol/sdk/client/stdio.js');
const { LATEST_PROTOCOL_VERSION } = req('@modelcontextprotocol/sdk/types.js');
const sdkVersion = JSON.parse(require('fs').readFileSync(path.join(path.resolve(npmDir),
	'node_modules/@modelcontextprotocol/sdk/package.json'))).version;

function fail(msg) {
	console.log('FAIL: ' + msg);
	process.exit(1);
}

async function main() {
	const transport = new StdioClientTransport({ command: ift, args: ['mcp', '-i', trace],
						     stderr: 'pipe' });
	const client = new Client({ name: 'ift-sdk-check', version: '1.0.0' });
	await client.connect(transport);
	const info = client.getServerVersion();
	if (!info || info.name !== 'ingero-ftrace')
		fail('serverInfo ' + JSON.stringify(info));
	const caps = client.getServerCapabilities();
	if (!caps.tools || !caps.prompts)
		fail('capabilities ' + JSON.stringify(caps));
	await client.ping();

	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	const want = ['get_causal_chains', 'get_op_latency', 'get_per_process_breakdown',
		      'get_profile', 'get_slow_calls', 'get_stacks', 'get_timeline',
		      'get_trace_stats', 'run_sql'];
	if (JSON.stringify(names) !== JSON.stringify(want))
		fail('tools ' + names);
	const { prompts } = await client.listPrompts();
	if (prompts.length !== 1 || prompts[0].name !== 'investigate')
		fail('prompts ' + JSON.stringify(prompts));
	const p = await client.getPrompt({ name: 'investigate', arguments: { question: 'why?' } });
	if (!p.messages[0].content.text.includes('get_causal_chains'))
		fail('prompt text');

	const call = async (name, args, isError = false) => {
		const r = await client.callTool({ name, arguments: args });
		if (!!r.isError !== isError)
			fail(`${name}: isError ${r.isError}: ${r.content[0].text.slice(0, 200)}`);
		if (r.content[0].type !== 'text' || !r.content[0].text)
			fail(`${name}: no text`);
		if (!isError && !r.structuredContent)
			fail(`${name}: no structuredContent`);
		return r;
	};
	const stats = (await call('get_trace_stats', {})).structuredContent;
	const op = stats.ops[0].op;
	const chains = (await call('get_causal_chains', { limit: 3 })).structuredContent;
	const procs = (await call('get_per_process_breakdown', {})).structuredContent;
	await call('get_per_process_breakdown', { pid: procs.processes[0].pid });
	const lat = (await call('get_op_latency', { op })).structuredContent;
	if (lat.histogram.reduce((s, b) => s + b.calls, 0) !== stats.ops[0].calls)
		fail('histogram sum');
	const slow = (await call('get_slow_calls', { op, limit: 3 })).structuredContent;
	if (slow.slowest[0].dur_ns !== stats.ops[0].max_ns)
		fail('slowest call is not the max');
	await call('get_timeline', { from_ns: 0, limit: 20 });
	const sql = (await call('run_sql', { sql: 'SELECT count(*) FROM calls' })).structuredContent;
	if (sql.rows[0][0] !== stats.trace.calls)
		fail('run_sql count');
	if (stats.file.stacks === 0)
		await call('get_stacks', {}, true);
	await call('get_op_latency', { op: 'cudaNope' }, true);
	await call('get_causal_chains', { limit: 'x' }, true);
	let threw = false;
	try {
		await client.callTool({ name: 'no_such_tool', arguments: {} });
	} catch (e) {
		threw = e.code === -32602;
	}
	if (!threw)
		fail('an unknown tool did not give -32602');
	await client.close();

	let sites = 0;
	if (stacksTrace) {
		const c2 = new Client({ name: 'ift-sdk-check', version: '1.0.0' });
		await c2.connect(new StdioClientTransport({ command: ift,
			args: ['mcp', '-i', stacksTrace], stderr: 'pipe' }));
		await c2.listTools();	// the SDK validates against the listed outputSchema
		const r = await c2.callTool({ name: 'get_stacks', arguments: { limit: 20 } });
		if (r.isError || !r.structuredContent || !r.structuredContent.sites.length ||
		    !r.structuredContent.sites[0].frames.length)
			fail('get_stacks: ' + JSON.stringify(r).slice(0, 300));
		sites = r.structuredContent.sites.length;
		await c2.close();
	}
	console.log(`SDK ${sdkVersion} (protocol ${LATEST_PROTOCOL_VERSION}): ${tools.length} tools, ${prompts.length} prompt, ` +
		    `${chains.chains_total} chains, ${sites} call sites, every call validated`);
}

main().catch((e) => fail(e.stack || String(e)));
