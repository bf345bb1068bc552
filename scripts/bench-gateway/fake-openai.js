// A fake OpenAI-compatible upstream for scripts/bench-gateway.sh (nginx + njs): a canned
// chat.completion of about 690 bytes, or, for "stream": true, a 20-chunk event stream (one write per
// event as llama-server writes, or all in one write when the request has "bench_one_write": true), a usage chunk when stream_options.include_usage asks for it, then [DONE]. Also the GETs a
// llamacpp-kind backend makes (/health, /v1/models, /props, /slots).

var ID = 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG';
var CREATED = 1764130000;
var MODEL = 'bench-model';
var FINGERPRINT = 'fp_bench_0001';
var PIECES = ['Hello', '!', ' This', ' is', ' a', ' canned', ' answer', ' from', ' the', ' fake', ' upstream',
    ' of', ' the', ' gateway', ' benchmark', ',', ' word', ' by', ' word', '.'];
var USAGE = {
    prompt_tokens: 1117, completion_tokens: 20, total_tokens: 1137,
    prompt_tokens_details: {cached_tokens: 1024, audio_tokens: 0},
    completion_tokens_details: {reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0}
};

var COMPLETION = JSON.stringify({
    id: ID, object: 'chat.completion', created: CREATED, model: MODEL,
    choices: [{
        index: 0,
        message: {
            role: 'assistant',
            content: 'Hello! This is a canned answer from the fake upstream of the gateway benchmark, word by word,'
                + ' long enough to make the body about as large as a short real answer.',
            refusal: null, annotations: []
        },
        logprobs: null, finish_reason: 'stop'
    }],
    usage: USAGE, service_tier: 'default', system_fingerprint: FINGERPRINT
});

function chunk(delta, finishReason) {
    return 'data: ' + JSON.stringify({
        id: ID, object: 'chat.completion.chunk', created: CREATED, model: MODEL, system_fingerprint: FINGERPRINT,
        choices: [{index: 0, delta: delta, logprobs: null, finish_reason: finishReason}]
    }) + '\n\n';
}

// 20 events: the role with the first piece, 18 more pieces, the last piece with finish_reason.
var EVENTS = PIECES.map(function (piece, i) {
    if (i === 0) {
        return chunk({role: 'assistant', content: piece}, null);
    }
    return chunk({content: piece}, i === PIECES.length - 1 ? 'stop' : null);
});
var USAGE_EVENT = 'data: ' + JSON.stringify({
    id: ID, object: 'chat.completion.chunk', created: CREATED, model: MODEL, system_fingerprint: FINGERPRINT,
    choices: [], usage: USAGE
}) + '\n\n';
var DONE = 'data: [DONE]\n\n';

function completions(r) {
    var body = r.requestText || '';
    if (!/"stream"\s*:\s*true/.test(body)) {
        r.headersOut['Content-Type'] = 'application/json';
        r.return(200, COMPLETION);
        return;
    }
    r.status = 200;
    r.headersOut['Content-Type'] = 'text/event-stream';
    r.headersOut['Cache-Control'] = 'no-cache';
    r.sendHeader();
    var tail = (/"include_usage"\s*:\s*true/.test(body) ? USAGE_EVENT : '') + DONE;
    if (/"bench_one_write"\s*:\s*true/.test(body)) {
        r.send(EVENTS.join('') + tail);
        r.finish();
        return;
    }
    for (var i = 0; i < EVENTS.length; i++) {
        r.send(EVENTS[i]);
    }
    r.send(tail);
    r.finish();
}

function json(r, value) {
    r.headersOut['Content-Type'] = 'application/json';
    r.return(200, JSON.stringify(value));
}

function health(r) {
    json(r, {status: 'ok'});
}

function models(r) {
    json(r, {object: 'list', data: [{id: MODEL, object: 'model', created: CREATED, owned_by: 'bench'}]});
}

function props(r) {
    json(r, {default_generation_settings: {n_ctx: 4096}, total_slots: 4, model_path: MODEL + '.gguf'});
}

function slots(r) {
    json(r, []);
}

export default {completions, health, models, props, slots};
