"""The official OpenAI Python SDK's Responses API against a Lazarus gateway in front of a real backend.

Usage: python3 openai_responses_suite.py BASE_URL API_KEY MODEL [CALLING_MODEL]
Checks what SDK users do with responses.create: a whole answer, a stream (the SDK's event accumulator and
raw events), a function tool round trip, previous_response_id, retrieval, input items, deletion and the
error class of an unknown id. With CALLING_MODEL (a model whose backend forces a named tool_choice, as kt-native
does for Hermes-format templates), also a round trip whose call the model produces. Ends with
'N passed, N failed'; exit status 1 on any failure.
"""
import json
import sys
import traceback

import openai

BASE_URL, API_KEY, MODEL = sys.argv[1], sys.argv[2], sys.argv[3]
CALLING_MODEL = sys.argv[4] if len(sys.argv) > 4 else None
client = openai.OpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=120)
WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}},
                          "required": ["city"], "additionalProperties": False}, "strict": True}
# A grammar-constrained answer ends by itself, so a stream ends in response.completed on any model.
RIVER = {"format": {"type": "json_schema", "name": "river", "strict": True,
                    "schema": {"type": "object", "properties": {"river": {"type": "string", "enum": ["Nile", "Rhine"]}},
                               "required": ["river"], "additionalProperties": False}}}
checks = []


def check(fn):
    checks.append(fn)
    return fn


def create(**kw):
    return client.responses.create(**{"model": MODEL, "input": "Say something about rivers.",
                                      "max_output_tokens": 8, "temperature": 0, **kw})


@check
def a_whole_answer_is_a_response_with_a_message_and_usage():
    r = create(metadata={"suite": "python"})
    assert r.id.startswith("resp_") and r.object == "response", r
    assert r.status in ("completed", "incomplete"), r.status
    assert r.output[0].type == "message" and r.output[0].role == "assistant", r.output
    assert r.output_text == r.output[0].content[0].text, r
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0, r.usage
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens, r.usage
    assert r.usage.input_tokens_details.cached_tokens >= 0 and r.usage.output_tokens_details.reasoning_tokens >= 0
    assert r.metadata == {"suite": "python"} and r.max_output_tokens == 8 and r.temperature == 0, r


@check
def the_sdks_stream_helper_accumulates_the_same_answer():
    whole = create(store=False, text=RIVER, max_output_tokens=64)
    assert whole.status == "completed" and '"river"' in whole.output_text, whole
    deltas = []
    with client.responses.stream(model=MODEL, input="Say something about rivers.", max_output_tokens=64,
                                 temperature=0, store=False, text=RIVER) as stream:
        types = []
        for event in stream:
            types.append(event.type)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = stream.get_final_response()
    assert types[:2] == ["response.created", "response.in_progress"], types
    assert types[-1] == "response.completed", types
    assert "".join(deltas) == final.output_text == whole.output_text, (deltas, final.output_text, whole.output_text)


@check
def raw_stream_events_are_numbered_in_order():
    events = list(create(stream=True, store=False))
    assert [e.sequence_number for e in events] == list(range(len(events))), events
    assert len({e.response.id for e in events if hasattr(e, "response")}) == 1


@check
def a_function_tool_round_trip():
    # The model's call comes from the client's history: a generated test model calls no tool by itself, and
    # llama-server does not force calls for this template. The gateway's side of a call is the output item below.
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
            "arguments": '{"city":"Paris"}'}
    answer = create(input=[{"role": "user", "content": "What is the weather in Paris?"}, call,
                           {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21 C"}],
                    tools=[WEATHER], text=RIVER, max_output_tokens=64)
    assert answer.status == "completed" and answer.output[-1].type == "message", answer.output
    assert answer.tools[0].name == "get_weather", answer.tools
    items = client.responses.input_items.list(answer.id, order="asc")
    assert [i.type for i in items.data] == ["message", "function_call", "function_call_output"], items


def get_weather(city):
    """The tool the client runs for the model: it takes exactly the schema's arguments."""
    return {"Paris": "Sunny, 21 C", "Rome": "Cloudy, 17 C"}[city]


def a_model_produced_function_call_round_trip():
    # A named tool_choice makes the model write the call, whose arguments must fit the tool's strict schema; the
    # client runs the tool and sends the result back; a schema-bound final answer ends by itself on any model.
    ask = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.responses.create(model=CALLING_MODEL, input=ask, tools=[WEATHER], temperature=0,
                                    tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=300)
    assert first.status == "completed", first
    assert [o.type for o in first.output] == ["function_call"], first.output
    call = first.output[0]
    assert call.name == "get_weather" and call.call_id and call.status == "completed", call
    arguments = json.loads(call.arguments)
    schema = WEATHER["parameters"]
    assert set(arguments) == set(schema["required"]), arguments
    assert arguments["city"] in schema["properties"]["city"]["enum"], arguments
    output = get_weather(**arguments)
    answer = client.responses.create(model=CALLING_MODEL, input=ask + first.output + [
        {"type": "function_call_output", "call_id": call.call_id, "output": output}],
        tools=[WEATHER], text=RIVER, temperature=0, max_output_tokens=64)
    assert answer.status == "completed" and [o.type for o in answer.output] == ["message"], answer.output
    assert json.loads(answer.output_text)["river"] in ("Nile", "Rhine"), answer.output_text
    assert answer.usage.input_tokens > first.usage.input_tokens, "the call and its result reached the prompt"
    items = client.responses.input_items.list(answer.id, order="asc")
    assert [i.type for i in items.data] == ["message", "function_call", "function_call_output"], items
    assert items.data[1].arguments == call.arguments and items.data[2].output == output, items


if CALLING_MODEL:
    check(a_model_produced_function_call_round_trip)


@check
def a_stored_response_is_continued_retrieved_listed_and_deleted():
    first = create(input="Name a river.")
    second = create(input="Name another.", previous_response_id=first.id)
    assert second.previous_response_id == first.id
    assert client.responses.retrieve(first.id).output_text == first.output_text
    items = client.responses.input_items.list(first.id)
    assert [i.type for i in items.data] == ["message"] and items.data[0].content[0].text == "Name a river.", items
    client.responses.delete(first.id)
    try:
        client.responses.retrieve(first.id)
        raise AssertionError("a deleted response was found")
    except openai.NotFoundError as e:
        assert e.status_code == 404 and e.body["type"] == "invalid_request_error", e.body


@check
def an_unknown_model_is_a_not_found_error():
    try:
        create(model="no-such-model")
        raise AssertionError("no error")
    except openai.NotFoundError as e:
        assert e.status_code == 404, e


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
