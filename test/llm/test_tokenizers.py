"""The C++ tokenizers (extension/llm/tokenizers) against the reference Python
packages on one multilingual text set: Hugging Face tokenizer.json in four
styles against `tokenizers`, SentencePiece (BPE and unigram) against
`sentencepiece`, tiktoken ranks against `tiktoken`. Ids must be equal and
decoding must give the reference's text; malformed files must be refused
with a message naming what is wrong."""

import json

import pytest

from . import tokenizer_files as files

runner = pytest.importorskip("executorch.extension.llm.runner")


@pytest.fixture(scope="module", params=sorted(files.HF_STYLES))
def hf_pair(request, tmp_path_factory):
    from tokenizers import Tokenizer

    build, special_text = files.HF_STYLES[request.param]
    path = build(tmp_path_factory.mktemp("hf") / "tokenizer.json")
    return Tokenizer.from_file(str(path)), runner.load_tokenizer(str(path)), special_text


def test_hf_tokenizer_matches_tokenizers(hf_pair):
    reference, ours, special_text = hf_pair
    for text in files.TEXTS + [special_text]:
        expected = reference.encode(text, add_special_tokens=False).ids
        ids = ours.encode(text)
        assert ids == expected, text
        assert ours.decode_all(ids) == reference.decode(ids, skip_special_tokens=False), text
        assert ours.decode_all(ids, skip_special_tokens=True) == reference.decode(
            ids, skip_special_tokens=True
        ), text
    assert ours.vocab_size == reference.get_vocab_size()


def test_hf_streaming_decode_rebuilds_the_text(hf_pair):
    """decode(prev, token) piece by piece after BOS gives the bytes of the
    whole text, as the runner prints them."""
    reference, ours, _ = hf_pair
    text = "Streaming: 日本語 😀 and   spaces"
    ids = ours.encode(text, bos=1)
    assert ids[0] == ours.bos_id
    streamed = b"".join(ours.decode(p, t) for p, t in zip(ids, ids[1:]))
    assert streamed.decode("utf-8") == reference.decode(ids[1:], skip_special_tokens=False)


def test_hf_bos_eos_from_the_file(tmp_path):
    ours = runner.load_tokenizer(str(files.llama3_style(tmp_path / "tokenizer.json")))
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert ours.bos_id == reference.token_to_id("<|begin_of_text|>")
    assert ours.eos_id == reference.token_to_id("<|end_of_text|>")
    assert reference.token_to_id("<|eot_id|>") in ours.stop_tokens
    # Loading the directory finds tokenizer.json in it.
    assert runner.load_tokenizer(str(tmp_path)).encode("hi") == ours.encode("hi")
    # tokenizer_config.json beside the file names BOS/EOS.
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<|eot_id|>", "eos_token": {"content": "<|eot_id|>"}})
    )
    configured = runner.load_tokenizer(str(tmp_path / "tokenizer.json"))
    assert configured.bos_id == configured.eos_id == reference.token_to_id("<|eot_id|>")


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_sentencepiece_matches_sentencepiece(tmp_path, model_type):
    import sentencepiece as spm

    path = files.sentencepiece_model(tmp_path / "tokenizer.model", model_type)
    reference = spm.SentencePieceProcessor(model_file=str(path))
    ours = runner.load_tokenizer(str(path))
    assert ours.vocab_size == reference.vocab_size()
    assert (ours.bos_id, ours.eos_id) == (reference.bos_id(), reference.eos_id())
    for text in files.TEXTS:
        ids = ours.encode(text)
        assert ids == reference.encode(text), text
        assert ours.decode_all(ids) == reference.decode(ids), text
        with_bos = ours.encode(text, bos=1, eos=1)
        assert with_bos == [reference.bos_id()] + ids + [reference.eos_id()]
        streamed = b"".join(ours.decode(p, t) for p, t in zip(with_bos, with_bos[1:]))
        assert streamed.decode("utf-8") == reference.decode(ids), text


def test_tiktoken_matches_tiktoken(tmp_path):
    import tiktoken

    path = tmp_path / "tokenizer.model"
    ranks = files.tiktoken_ranks(path)
    specials = files.llama3_special_tokens()
    reference = tiktoken.Encoding(
        name="test",
        pat_str=files.LLAMA3_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={t: len(ranks) + i for i, t in enumerate(specials)},
    )
    ours = runner.load_tokenizer(str(path))
    assert ours.vocab_size == len(ranks) + 256
    assert ours.bos_id == len(ranks) and ours.eos_id == len(ranks) + 1
    assert len(ranks) + specials.index("<|eot_id|>") in ours.stop_tokens
    for text in files.TEXTS + ["<|begin_of_text|>Hi<|eot_id|>\n<|start_header_id|>x"]:
        ids = ours.encode(text)
        assert ids == reference.encode(text, allowed_special="all"), text
        assert ours.decode_all(ids) == reference.decode(ids), text


def test_bad_tokenizer_files_are_refused_with_a_reason(tmp_path):
    def refused(content, *expected):
        path = tmp_path / "bad"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        with pytest.raises(RuntimeError) as info:
            runner.load_tokenizer(str(path))
        for part in expected:
            assert part in str(info.value), str(info.value)

    good = json.loads(files.gpt2_style(tmp_path / "good.json").read_text())
    refused("{not json", "not valid JSON")
    refused(json.dumps({"model": {"type": "WordPiece", "vocab": {}}}), "model.type", "WordPiece")
    broken = json.loads(json.dumps(good))
    broken["model"]["merges"][3] = "zzz qqq"
    refused(json.dumps(broken), "model.merges[3]", "'zzz' is not in the vocabulary")
    broken = json.loads(json.dumps(good))
    broken["pre_tokenizer"] = {"type": "BertPreTokenizer"}
    refused(json.dumps(broken), "pre_tokenizer", "BertPreTokenizer")
    broken["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(unclosed"},
                               "behavior": "Isolated", "invert": False}
    refused(json.dumps(broken), "invalid regular expression", "(unclosed")
    refused("QUJD 0\nnot-base64!! 1\n", "bad:2", "base64")
    refused("QUJD 0\n", "byte 0 has no rank")
    refused(b"\x0a\x05junk", "not a SentencePiece model")
    refused("", "empty")
    with pytest.raises(RuntimeError, match="cannot open"):
        runner.load_tokenizer(str(tmp_path / "missing.json"))
    ours = runner.load_tokenizer(str(tmp_path / "good.json"))
    with pytest.raises(RuntimeError, match="out of range"):
        ours.decode(0, ours.vocab_size)
