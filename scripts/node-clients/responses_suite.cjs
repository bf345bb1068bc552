// The official `openai` npm SDK's Responses API and an `@openai/agents` one-tool agent run against a Lazarus
// gateway in front of a real backend.
// Usage: node responses_suite.cjs BASE_URL API_KEY MODEL [CALLING_MODEL]   (run with the installed clients: see setup.sh)
// With CALLING_MODEL (a model whose backend forces a named tool_choice, as kt-native does for Hermes-format
// templates), an agent run whose tool call the model produces as well.
// Ends with 'N passed, N failed'; exit status 1 on any failure.
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');
const clients = process.env.LAZARUS_NODE_CLIENTS || path.resolve(__dirname, '../../.node-clients');
const load = createRequire(path.join(clients, 'package.json'));
const OpenAI = load('openai').default;
const agents = load('@openai/agents');
const { z } = load('zod');

const [BASE_URL, API_KEY, MODEL, CALLING_MODEL] = process.argv.slice(2);
const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, maxRetries: 0, timeout: 120000 });
const base = { model: MODEL, input: 'Say something about rivers.', max_output_tokens: 8, temperature: 0 };
// A grammar-constrained answer ends by itself, so a stream ends in response.completed on any model.
const RIVER = {
  format: {
    type: 'json_schema', name: 'river', strict: true,
    schema: { type: 'object', properties: { river: { type: 'string', enum: ['Nile', 'Rhine'] } },
      required: ['river'], additionalProperties: false },
  },
};
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const assert = (ok, what) => { if (!ok) throw new Error('assertion failed: ' + what); };

check('a whole answer is a response with a message and usage', async () => {
  const r = await client.responses.create({ ...base });
  assert(r.id.startsWith('resp_') && r.object === 'response', JSON.stringify(r));
  assert(r.output[0].type === 'message' && r.output_text === r.output[0].content[0].text, JSON.stringify(r.output));
  assert(r.usage.output_tokens > 0 && r.usage.total_tokens === r.usage.input_tokens + r.usage.output_tokens,
    JSON.stringify(r.usage));
});

check('the SDK stream helper accumulates the same answer as a whole request', async () => {
  const whole = await client.responses.create({ ...base, max_output_tokens: 64, text: RIVER, store: false });
  const stream = client.responses.stream({ ...base, max_output_tokens: 64, text: RIVER, store: false });
  const types = [];
  let text = '';
  stream.on('event', (e) => types.push(e.type));
  stream.on('response.output_text.delta', (e) => { text += e.delta; });
  const final = await stream.finalResponse();
  assert(types[0] === 'response.created' && types[1] === 'response.in_progress', types.join());
  assert(types[types.length - 1] === 'response.completed', types.join());
  assert(text === final.output_text && text === whole.output_text,
    JSON.stringify([text, final.output_text, whole.output_text]));
});

check('raw stream events are numbered in order', async () => {
  const stream = await client.responses.create({ ...base, stream: true, store: false });
  const numbers = [];
  for await (const e of stream) numbers.push(e.sequence_number);
  assert(numbers.length > 4 && numbers.every((n, i) => n === i), numbers.join());
});

check('an Agents SDK agent with a tool runs to its structured final output', async () => {
  agents.setTracingDisabled(true);
  agents.setOpenAIAPI('responses');
  agents.setDefaultOpenAIClient(client);
  const weather = agents.tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.enum(['Paris', 'Rome']) }),
    execute: async ({ city }) => `Sunny in ${city}`,
  });
  // The structured output ends the answer by grammar: a generated test model has no reason to stop by itself.
  const agent = new agents.Agent({
    name: 'Rivers', instructions: 'Name a river.', model: MODEL, tools: [weather],
    outputType: z.object({ river: z.enum(['Nile', 'Rhine']) }),
    modelSettings: { maxTokens: 64, temperature: 0 },
  });
  const result = await agents.run(agent, 'Which river?', { maxTurns: 3 });
  assert(['Nile', 'Rhine'].includes(result.finalOutput && result.finalOutput.river), JSON.stringify(result.finalOutput));
  assert(result.rawResponses.length >= 1 && result.rawResponses[0].usage.outputTokens > 0,
    JSON.stringify(result.rawResponses.map((r) => r.usage)));
});

if (CALLING_MODEL) {
  check('an Agents SDK agent forced to its tool calls it, runs it and answers', async () => {
    agents.setTracingDisabled(true);
    agents.setOpenAIAPI('responses');
    agents.setDefaultOpenAIClient(client);
    const ran = [];
    const weather = agents.tool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.enum(['Paris', 'Rome']) }),
      execute: async ({ city }) => { ran.push(city); return `Sunny in ${city}`; },
    });
    // toolChoice names the tool: the model must write its call; the SDK then resets the choice to auto, and the
    // structured output ends the second turn by grammar.
    const agent = new agents.Agent({
      name: 'Weather', instructions: 'Look up the weather, then name a river.', model: CALLING_MODEL, tools: [weather],
      outputType: z.object({ river: z.enum(['Nile', 'Rhine']) }),
      modelSettings: { toolChoice: 'get_weather', maxTokens: 300, temperature: 0 },
    });
    const result = await agents.run(agent, 'What is the weather in Paris?', { maxTurns: 3 });
    const calls = result.rawResponses[0].output.filter((o) => o.type === 'function_call');
    assert(calls.length === 1 && calls[0].name === 'get_weather', JSON.stringify(result.rawResponses[0].output));
    const args = JSON.parse(calls[0].arguments);
    assert(Object.keys(args).join() === 'city' && ['Paris', 'Rome'].includes(args.city), calls[0].arguments);
    assert(ran.length === 1 && ran[0] === args.city, JSON.stringify(ran));
    const types = result.newItems.map((i) => i.type);
    assert(types.join() === 'tool_call_item,tool_call_output_item,message_output_item', types.join());
    assert(result.rawResponses.length === 2, String(result.rawResponses.length));
    assert(['Nile', 'Rhine'].includes(result.finalOutput && result.finalOutput.river), JSON.stringify(result.finalOutput));
  });
}

(async () => {
  let passed = 0;
  let failed = 0;
  for (const [name, fn] of checks) {
    try {
      await fn();
      passed++;
      console.log('PASS', name);
    } catch (e) {
      failed++;
      console.log('FAIL', name);
      console.log(e && e.stack ? e.stack : e);
    }
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
