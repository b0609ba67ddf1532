"PrefDisco-mini: the chat client against a mock OpenAI-compatible server on loopback, the protocol, parity and loaders."
import json
import numpy as np
import pytest
from iclr26nb.prefdisco import *


@pytest.fixture(scope="module")
def world():
    cat = DimensionCatalog.default()
    pers = PersonaGenerator(cat, seed=3).sample(6)
    batch = InstanceBuilder(cat, seed=3).build_batch(TaskSuite.synthetic(6, seed=3), pers, per_problem=3)
    return cat, batch


def ask(msgs): return [dict(role="user", content=msgs)]


def test_client_roundtrip_and_request_shape():
    with MockChatServer(lambda m: "echo: " + m[-1]["content"]) as srv:
        assert srv.base_url.startswith("http://127.0.0.1:")
        c = ChatClient(srv.base_url, "m", api_key="k", backoff=0)
        assert c.chat(ask("hi"), temperature=0.2) == "echo: hi"
        req = srv.requests[0]
        assert req["model"] == "m" and req["temperature"] == 0.2 and req["_auth"] == "Bearer k"
        assert c.stats["calls"] == 1 and c.stats["completion_tokens"] == 2


def test_api_key_from_environment(monkeypatch):
    monkeypatch.setenv("PREFDISCO_API_KEY", "from-env")
    with MockChatServer(replies=["ok"]) as srv:
        ChatClient(srv.base_url, "m").chat(ask("x"))
        assert srv.requests[0]["_auth"] == "Bearer from-env"


def test_retries_then_error_with_status_and_body():
    with MockChatServer(replies=[HTTPFailure(429, "slow down"), "fine"]) as srv:
        c = ChatClient(srv.base_url, "m", backoff=0)
        assert c.chat(ask("x")) == "fine" and c.stats["retries"] == 1
    with MockChatServer(replies=[HTTPFailure(503, "overloaded")]) as srv:
        with pytest.raises(RuntimeError, match="HTTP 503: .*overloaded"):
            ChatClient(srv.base_url, "m", backoff=0, max_retries=2).chat(ask("x"))
        assert len(srv.requests) == 3
    with MockChatServer(replies=[HTTPFailure(400, "bad request body")]) as srv:
        with pytest.raises(RuntimeError, match="HTTP 400: .*bad request body"):
            ChatClient(srv.base_url, "m", backoff=0).chat(ask("x"))
        assert len(srv.requests) == 1                                        # 4xx: no retry


def test_unreachable_endpoint_and_timeout():
    import socket, threading
    with pytest.raises(RuntimeError, match="failed after 1 attempts"):
        ChatClient("http://127.0.0.1:9", "m", max_retries=0, timeout=2).chat(ask("x"))
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)               # accepts, never answers
    try:
        with pytest.raises(RuntimeError, match="failed after 1 attempts"):
            ChatClient(f"http://127.0.0.1:{s.getsockname()[1]}", "m", max_retries=0, timeout=0.5).chat(ask("x"))
    finally: s.close()


def test_json_mode_repair_cache_and_errors(tmp_path):
    with MockChatServer(replies=["Sure: {'score': 4} ok", "no braces"]) as srv:
        c = ChatClient(srv.base_url, "m", backoff=0, cache_dir=tmp_path)
        assert json.loads(c.chat(ask("q"), json_mode=True)) == {"score": 4}
        assert c.chat(ask("q"), json_mode=True) == '{"score": 4}' and c.stats["cached"] == 1
        with pytest.raises(ValueError, match="no JSON object"): c.chat(ask("other"), json_mode=True)
    with pytest.raises(ValueError, match="loopback only"): LocalChatServer(lambda m: "", host="0.0.0.0")


def test_server_routes_and_concurrency():
    import urllib.request, urllib.error
    from concurrent.futures import ThreadPoolExecutor
    with MockChatServer(lambda m: m[-1]["content"].upper()) as srv:
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(srv.base_url + "/models", data=b"{}", method="POST"))
        assert e.value.code == 404
        c = ChatClient(srv.base_url, "m", backoff=0)
        with ThreadPoolExecutor(4) as ex: out = list(ex.map(lambda i: c.chat(ask(f"m{i}")), range(12)))
        assert out == [f"M{i}" for i in range(12)] and c.stats["calls"] == 12


def test_llm_agent_over_http_with_parse_errors(world):
    cat, batch = world
    inst = batch.instance(0)
    replies = [format_action(ASK, cat["rigor"].question()), "gibberish without a tag", "###ACTION###: 'final_answer'\n###RESPONSE###: Answer: 1.\nStyle: Rigor: proof-level."]
    with MockChatServer(replies=replies) as srv:
        ag = LLMAgent(ChatClient(srv.base_url, "m", backoff=0), style_reader=lambda t: read_style(t, cat))
        e = run_episode(inst, ag)
        assert e.n_questions == 1 and e.asked == ["rigor"] and e.parse_errors == 1
        assert srv.requests[0]["messages"][0]["role"] == "system" and "###ACTION###" in srv.requests[0]["messages"][0]["content"]
        assert e.transcript[-1]["content"].endswith("Rigor: proof-level.")


def test_llm_judge_failures_are_flagged(world):
    cat, batch = world
    inst = batch.instance(1)
    n = len(inst.rubric)
    with MockChatServer(replies=['{"score": "n/a"}'] + ['{"score": 5}'] * (n - 1)) as srv:
        S, per, failed = LLMJudge(ChatClient(srv.base_url, "j", backoff=0)).score(Response(None, None, "x"), inst)
        assert failed and list(per.values())[0] is None and S == pytest.approx(5.0)


def test_vectorised_equals_text_protocol(world):
    cat, batch = world
    prior = PopulationPrior.fit(batch, alpha=1.0)
    agents = dict(g=GenericAgent(), o=OracleAgent(), r=RandomAskAgent(2), n=NaiveDiscoveryAgent(2, 0.4), p=PriorGreedyAgent(3, prior=prior))
    objs = batch.to_instances()
    for ut in USER_TYPES:
        slow = evaluate(objs, agents, user_type=ut, seed=5).sort_values(["agent", "uid"])
        fast = pytest.importorskip("pandas").concat([simulate(batch, a, user_type=ut, seed=5, name=k) for k, a in agents.items()]).sort_values(["agent", "uid"])
        assert np.allclose(slow.score.values, fast.score.values, atol=1e-12, rtol=0)
        assert (slow.n_questions.values == fast.n_questions.values).all() and (slow.correct.values == fast.correct.values).all()


def test_seeded_runs_are_identical(world):
    cat, batch = world
    a = simulate(batch, NaiveDiscoveryAgent(3, 0.5), user_type="collaborative", seed=2)
    b = simulate(batch, NaiveDiscoveryAgent(3, 0.5), user_type="collaborative", seed=2)
    assert a.equals(b)


def test_jsonl_roundtrip(world, tmp_path):
    cat, batch = world
    objs = batch.to_instances()[:10]
    back = load_prefdisco_jsonl(save_prefdisco_jsonl(objs, tmp_path/"x.jsonl", cat), cat)
    assert [(c.dim, c.target, c.weight) for i in back for c in i.rubric] == [(c.dim, c.target, c.weight) for i in objs for c in i.rubric]
    with pytest.raises(ValueError, match="line 1: record lacks"):
        (tmp_path/"bad.jsonl").write_text(json.dumps(dict(type="personalized_problem", problem_id="p")))
        load_prefdisco_jsonl(tmp_path/"bad.jsonl", cat)


def test_dialog_lm_save_load_and_serve(world, tmp_path):
    import torch
    cat, batch = world
    corpus = dialog_corpus(batch.to_instances()[:20], RandomAskAgent(1))
    model, tok, _ = train_dialog_lm(corpus, steps=3, batch_size=4, device="cpu", verbose=False, tokenizer=DialogTokenizer.build(corpus, cat))
    m2, t2 = load_dialog_lm(save_dialog_lm(tmp_path/"lm", model, tok))
    x = torch.tensor([tok.chat(corpus[0])[0]])
    with torch.no_grad(): assert torch.equal(model(x), m2(x))
    with LocalChatServer(TinyLMResponder(m2, t2, max_new_tokens=8)) as srv:
        assert isinstance(ChatClient(srv.base_url, "tiny").chat(ask("hello")), str)


def test_client_sends_image_content_parts():
    from PIL import Image
    msgs = gen_messages("what is shown?", Image.new("RGB", (4, 4), (0, 0, 255)))
    with MockChatServer(replies=['{"ok": 1}']) as srv:
        assert json.loads(ChatClient(srv.base_url, "m", backoff=0).chat(msgs, json_mode=True)) == {"ok": 1}
        part = srv.requests[0]["messages"][1]["content"][1]
        assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/jpeg;base64,")
    with pytest.raises(ValueError, match="image_url parts"):
        ChatClient("http://127.0.0.1:9", "m").chat([dict(role="user", content=[dict(type="audio")])])


def test_hf_loader_on_a_datasets_stand_in(world, tmp_path):
    datasets = pytest.importorskip("datasets")
    cat, batch = world
    objs = batch.subset(np.arange(10)).to_instances()
    save_prefdisco_jsonl(objs, tmp_path/"hub"/"aime_5k.jsonl", cat)
    datasets.load_dataset("json", data_files=str(tmp_path/"hub"/"aime_5k.jsonl"))["train"].save_to_disk(str(tmp_path/"saved"))
    for src in (tmp_path/"hub", tmp_path/"saved"):
        back = load_prefdisco_hf(src, catalog=cat)
        assert [i.uid for i in back] == [i.uid for i in objs]
        assert [[(c.dim, c.target, c.weight) for c in i.rubric] for i in back] == [[(c.dim, c.target, c.weight) for c in i.rubric] for i in objs]


def _image_requests(srv):
    "For each request to the model under test: the indices of messages that carry an image_url part, and the opening user index."
    out = []
    for r in srv.requests:
        msgs = r["messages"]; first = next(i for i, m in enumerate(msgs) if m["role"] == "user")
        c0 = msgs[first]["content"]; text = c0[0]["text"] if isinstance(c0, list) else c0
        if text.startswith("I need help"):
            out.append((first, [i for i, m in enumerate(msgs) if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image_url"]))
    return out


def test_image_problem_jsonl_to_protocol(world, tmp_path):
    from dataclasses import replace
    from PIL import Image
    cat, batch = world
    objs = batch.to_instances()[:3]
    objs[1] = replace(objs[1], image=Image.new("RGB", (5, 3), (250, 0, 0)))
    back = load_prefdisco_jsonl(save_prefdisco_jsonl(objs, tmp_path/"b.jsonl", cat), cat)
    assert [i.image is not None for i in back] == [False, True, False] and (tmp_path/"images"/"00001.png").exists()
    reply = lambda m: ("###ACTION###: 'final_answer'\n###RESPONSE###: " if m[0]["role"] == "system" and "###ACTION###" in m[0]["content"] else "") + "Answer: B."
    with MockChatServer(lambda m: reply(m) if _is_agent(m) else '{"response": "ok", "expressed_preferences": [], "score": 3, "correct": 0}') as srv:
        c = ChatClient(srv.base_url, "vlm", backoff=0)
        ep, _ = run_llm_protocol(back, c, image_only=True, n_workers=2, max_turns=1)
        assert len(ep) == 3 and ep.has_image.all()
        seen = _image_requests(srv)
        assert len(seen) == 4 and all(ix == [first] for first, ix in seen)          # no_prompt 1, known 1, discovery 2
        srv.requests.clear()
        run_llm_protocol(back, c, image_only=True, see_images=False, n_workers=1, max_turns=1)
        assert all(ix == [] for _, ix in _image_requests(srv))


def _is_agent(msgs):
    c0 = next(m for m in msgs if m["role"] == "user")["content"]
    return (c0[0]["text"] if isinstance(c0, list) else c0).startswith("I need help")


def test_image_feature_through_datasets(world, tmp_path):
    datasets = pytest.importorskip("datasets")
    from PIL import Image
    cat, batch = world
    objs = batch.to_instances()[:2]
    save_prefdisco_jsonl(objs, tmp_path/"x.jsonl", cat)
    rows = [json.loads(l) for l in (tmp_path/"x.jsonl").read_text().splitlines()][1:]
    Image.new("RGB", (6, 4), (0, 0, 255)).save(tmp_path/"blue.png")
    for r, im in zip(rows, [str(tmp_path/"blue.png"), None]):
        r["original_problem"] = dict(question=r["original_problem"]["question"], answer=r["original_problem"]["answer"], image=im)
    ds = datasets.Dataset.from_list(rows)
    feats = ds.features.copy(); feats["original_problem"]["image"] = datasets.Image()      # ScienceQA's image column type
    ds.cast(feats).save_to_disk(str(tmp_path/"disk"))
    back = load_prefdisco_hf(tmp_path/"disk", catalog=cat)
    assert back[1].image is None and pil_image(back[0].image).size == (6, 4)
    with MockChatServer(replies=["Answer: 1."]) as srv:
        LLMAgent(ChatClient(srv.base_url, "vlm", backoff=0), "no_prompt").act([dict(role="user", content="I need help with the following task: x")], back[0].view("no_prompt"))
        assert _image_requests(srv) == [(0, [0])]


def test_llm_dedup_on_the_mock_server():
    def dedup(msgs):
        text = msgs[-1]["content"]
        head, tail = text.split("EXISTING DIMENSIONS:\n", 1)
        shown = list(json.loads(tail.split("\n\nTwo dimensions")[0]))
        new = [l[2:].split(":")[0] for l in head.splitlines() if l.startswith("- ")]
        same = {"Diagram Use": "Visual Aids", "Wordiness": "Verbosity"}
        return json.dumps({n: dict(action="map_to_existing", existing_dimension=same[n]) if same.get(n) in shown else dict(action="keep_new") for n in new})
    pool = {"Visual Aids": "diagrams", "Verbosity": "length", "Tone": "warmth"}
    with MockChatServer(dedup) as srv:
        c = ChatClient(srv.base_url, "m", backoff=0)
        for chunk in (1, 2, 3, 200):
            srv.requests.clear()
            hit, st = llm_dedup_dimensions(c, {"Diagram Use": "", "Wordiness": "", "Humor": "", "Tone": ""}, pool, chunk_size=chunk)
            assert hit == {"Diagram Use": "Visual Aids", "Wordiness": "Verbosity", "Humor": None, "Tone": "Tone"}
            assert st["calls"] == len(srv.requests) == -(-3 // chunk) and st["invalid"] == st["missing"] == 0
        assert llm_dedup_dimensions(c, {"Tone": ""}, pool) == ({"Tone": "Tone"}, dict(calls=0, invalid=0, missing=0, unparsable=0))
    with pytest.raises(ValueError, match="chunk_size"): llm_dedup_dimensions(c, {}, pool, chunk_size=True)
