"""The official OpenAI Python SDK against a Lazarus gateway in front of one llama-server.

Usage: python3 openai_sdk_suite.py BASE_URL API_KEY MODEL
(BASE_URL like http://127.0.0.1:8080/v1; MODEL routed to one llama-server with at least two slots.)

Sixteen checks of what SDK users do: answers, streams, usage, legacy completions, the error classes the
SDK raises for the gateway's 4xx, and traffic across llama-server's connection limits (sequential
requests, more concurrent requests than slots, a pause past its 5 s keep-alive). The SDK's own retries
are off, so every failure shows. Ends with the line 'N passed, N failed'; exit status 1 on any failure.
"""
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import openai

BASE_URL, API_KEY, MODEL = sys.argv[1], sys.argv[2], sys.argv[3]
client = openai.OpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=60)
PROMPT = [{"role": "user", "content": "Say something about rivers."}]
checks = []


def check(fn):
    checks.append(fn)
    return fn


def chat(**kw):
    return client.chat.completions.create(**{"model": MODEL, "messages": PROMPT, "max_tokens": 8, "temperature": 0,
                                             **kw})


def streamed_text(**kw):
    chunks = list(chat(stream=True, stream_options={"include_usage": True}, **kw))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return chunks, text


@check
def models_list_names_the_model():
    assert MODEL in [m.id for m in client.models.list().data]


@check
def chat_answer_with_usage():
    answer = chat()
    assert answer.id.startswith("chatcmpl-"), answer.id
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage.completion_tokens == 8
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + 8


@check
def stream_ends_with_usage_and_keeps_one_id():
    chunks, _ = streamed_text()
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 8
    assert len({c.id for c in chunks}) == 1


@check
def stream_text_equals_the_answer_under_greedy_decoding():
    _, text = streamed_text()
    assert text == chat().choices[0].message.content


@check
def legacy_completion():
    answer = client.completions.create(model=MODEL, prompt="The river", max_tokens=6, temperature=0)
    assert answer.usage.completion_tokens == 6 and answer.choices[0].text is not None


@check
def legacy_completion_stream():
    chunks = list(client.completions.create(model=MODEL, prompt="The river", max_tokens=6, temperature=0,
                                            stream=True))
    assert any(c.choices and c.choices[0].finish_reason == "length" for c in chunks)


@check
def context_overflow_is_bad_request():
    try:
        client.chat.completions.create(model=MODEL, max_tokens=4,
                                       messages=[{"role": "user", "content": "rivers run to the sea " * 300}])
    except openai.BadRequestError as e:
        assert e.code == "context_length_exceeded", e.code
        return
    raise AssertionError("no error")


@check
def unknown_model_is_not_found():
    try:
        client.chat.completions.create(model="no-such-model", messages=PROMPT, max_tokens=2)
    except openai.NotFoundError as e:
        assert e.code == "model_not_found", e.code
        return
    raise AssertionError("no error")


@check
def wrong_key_is_authentication_error():
    other = openai.OpenAI(base_url=BASE_URL, api_key="wrong", max_retries=0)
    try:
        other.chat.completions.create(model=MODEL, messages=PROMPT, max_tokens=2)
    except openai.AuthenticationError as e:
        assert e.status_code == 401
        return
    raise AssertionError("no error")


@check
def out_of_range_parameter_is_bad_request():
    try:
        chat(temperature=7)
    except openai.BadRequestError as e:
        assert e.status_code == 400 and e.param == "temperature", (e.status_code, e.param)
        return
    raise AssertionError("no error")


@check
def raw_response_names_the_backend():
    raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=PROMPT, max_tokens=2)
    assert raw.headers.get("x-lazarus-backend"), dict(raw.headers)
    assert raw.parse().choices[0].message.content is not None


@check
def twenty_sequential_streams():
    for _ in range(20):
        chunks, _ = streamed_text()
        assert chunks[-1].usage.completion_tokens == 8


@check
def twenty_sequential_answers():
    for _ in range(20):
        assert chat().usage.completion_tokens == 8


@check
def more_concurrent_requests_than_slots():
    def one(i):
        return streamed_text()[0][-1].usage.completion_tokens if i % 2 else chat().usage.completion_tokens
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(one, range(16))) == [8] * 16


@check
def a_request_after_the_upstream_keep_alive_ran_out():
    chat()
    time.sleep(6)  # llama-server drops idle keep-alive connections after 5 s
    assert chat().usage.completion_tokens == 8
    assert streamed_text()[0][-1].usage.completion_tokens == 8


@check
def stop_sequence_ends_the_answer():
    reference = chat(max_tokens=12).choices[0].message.content
    pairs = [reference[i:i + 2] for i in range(2, len(reference) - 1) if reference[i:i + 2].isascii()
             and reference[i:i + 2].isalnum()]
    if not pairs:
        raise AssertionError("no two ASCII letters in the answer to stop at: %r" % reference)
    stop = pairs[0]
    answer = chat(max_tokens=12, stop=[stop])
    assert answer.choices[0].finish_reason == "stop" and stop not in answer.choices[0].message.content


passed = failed = 0
for fn in checks:
    try:
        fn()
        passed += 1
        print("PASS", fn.__name__)
    except Exception:  # every failure is reported, the run goes on
        failed += 1
        print("FAIL", fn.__name__)
        traceback.print_exc()
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
