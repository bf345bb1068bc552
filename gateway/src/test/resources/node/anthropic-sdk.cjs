// Drives @anthropic-ai/sdk against a Messages endpoint (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, MODEL) and prints
// one JSON object with what each call returned, for the Java test to judge. Exits non-zero only if the script
// itself breaks; an API error is reported in the output.
const Anthropic = require('@anthropic-ai/sdk');

const client = new Anthropic({ maxRetries: 0, timeout: 120_000 });
const model = process.env.MODEL;
const weather = {
  name: 'get_weather',
  description: 'The weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

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
