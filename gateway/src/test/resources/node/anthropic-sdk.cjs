// Drives @anthropic-ai/sdk against a Messages endpoint (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, MODEL) and prints
// one JSON object with what each call returned, for the Java test to judge. Exits non-zero only if the script
// itself breaks; an API error is reported in the output. With CALLING_MODEL (a model whose backend forces a named
// tool_choice), also a round trip whose tool_use the model writes, streamed and not.
const Anthropic = require('@anthropic-ai/sdk');

const client = new Anthropic({ maxRetries: 0, timeout: 120_000 });
const model = process.env.MODEL;
const weather = {
  name: 'get_weather',
  description: 'The weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

// The forced round trip's tool: a closed schema, so that the model's arguments are checked against it.
const cityWeather = {
  name: 'city_weather',
  description: 'The weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
    required: ['city'], additionalProperties: false },
};
const forecasts = { Paris: '18 C, sunny', Rome: '22 C, cloudy' };

// tool_choice names the tool, the client runs the call the model wrote and sends its result back.
async function forcedRoundTrip(out, callingModel) {
  const ask = { role: 'user', content: 'What is the weather in Paris?' };
  const forced = {
    model: callingModel, max_tokens: 300, temperature: 0, tools: [cityWeather],
    tool_choice: { type: 'tool', name: 'city_weather' }, messages: [ask],
  };
  out.forcedTurn = await client.messages.create(forced);
  const stream = client.messages.stream(forced);
  out.forcedStreamDeltas = [];
  for await (const event of stream) {
    if (event.type === 'content_block_delta') out.forcedStreamDeltas.push(event.delta.type);
  }
  out.forcedStreamMessage = await stream.finalMessage();
  const use = out.forcedTurn.content.find((b) => b.type === 'tool_use');
  if (!use) return;
  out.forcedToolResult = forecasts[use.input.city];
  out.forcedAnswer = await client.messages.create({
    model: callingModel, max_tokens: 12, temperature: 0, tools: [cityWeather],
    messages: [ask, { role: 'assistant', content: out.forcedTurn.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: String(out.forcedToolResult) }] }],
  });
}

async function errorOf(call) {
  try {
    await call();
    return null;
  } catch (e) {
    return { status: e.status, name: e.constructor.name, body: e.error };
  }
}

async function main() {
  const out = {};
  out.create = await client.messages.create({
    model, max_tokens: 12, temperature: 0, system: 'You are terse.',
    messages: [{ role: 'user', content: 'Say something about rivers.' }],
  });

  const stream = client.messages.stream({
    model, max_tokens: 12, temperature: 0, system: 'You are terse.',
    messages: [{ role: 'user', content: 'Say something about rivers.' }],
  });
  out.streamEvents = [];
  for await (const event of stream) {
    out.streamEvents.push(event.type);
  }
  out.streamMessage = await stream.finalMessage();

  out.countTokens = await client.messages.countTokens({
    model, system: 'You are terse.', messages: [{ role: 'user', content: 'Say something about rivers.' }],
  });

  // A tool round trip as a client makes it: the tools offered, then the call's result sent back.
  out.toolTurn = await client.messages.create({
    model, max_tokens: 12, tools: [weather], tool_choice: { type: 'auto' },
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  });
  out.toolResultTurn = await client.messages.create({
    model, max_tokens: 12, tools: [weather],
    messages: [
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: '18 C, sunny' }] }] },
    ],
  });

  if (process.env.CALLING_MODEL) {
    await forcedRoundTrip(out, process.env.CALLING_MODEL);
  }

  out.unknownModel = await errorOf(() => client.messages.create({
    model: 'no-such-model', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }],
  }));
  out.missingMaxTokens = await errorOf(() => client.messages.create({
    model, messages: [{ role: 'user', content: 'hi' }],
  }));
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
