"""Small tokenizer files built locally for the LLM tests (no downloads): Hugging
Face BPE tokenizers trained with `tokenizers` in the styles real models use,
a SentencePiece model trained with `sentencepiece`, and a tiktoken ranks file
derived from a byte-level BPE's merges."""

import base64
import io
import json

# The text set every tokenizer is checked on: scripts, emoji (with skin tone
# and zero-width joiners), CJK, combining marks, whitespace runs, digits,
# code, and special tokens written in the text (the tests add those).
TEXTS = [
    "Hello, world! How's it going? I'm fine, you'll see.",
    "  leading spaces,   runs   of spaces\t\ttabs\n\nand newlines  ",
    " one leading space",
    "日本語のテキストと中文字符，한국어 텍스트입니다。",
    "Emoji: 😀🎉👍🏽 family 👨‍👩‍👧‍👦 flag 🇫🇷",
    "Ünïcödé àccents: café, naïve, Straße, Ωμέγα, Русский текст.",
    "हिन्दी और मराठी, עברית, العربية",
    "Numbers 1234567 and 3.14159; code: def f(x):\n    return x ** 2  # done",
    "",
    "   ",
    "a\n",
]

# Training text: the text set and some English, so that merges form words.
CORPUS = TEXTS * 3 + [
    "The quick brown fox jumps over the lazy dog. " * 3,
    "Language models predict the next token from the previous tokens.",
    "Tokenizers split text into pieces; byte pair encoding merges frequent pairs.",
    "It's a test of the tokenizer: numbers like 2024, 42 and 1000000 too.",
]

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def llama3_special_tokens():
    """Llama 3's 256 special tokens in id order (the C++ default)."""
    tokens = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
    ]
    i = 2
    while len(tokens) < 256:
        tokens.append(f"<|reserved_special_token_{i}|>")
        i += 1
    return tokens


def _train(tokenizer, vocab_size, special_tokens, **trainer_args):
    from tokenizers import trainers

    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        show_progress=False,
        **trainer_args,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    return tokenizer


def gpt2_style(path):
    """Byte-level BPE with GPT-2's ByteLevel regex; <|endoftext|> special,
    one added token that strips the spaces around it."""
    from tokenizers import AddedToken, decoders, models, pre_tokenizers, Tokenizer

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    _train(
        tok,
        600,
        ["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.add_special_tokens(
        [AddedToken("<|im_end|>", lstrip=True, rstrip=True, normalized=False)]
    )
    tok.save(str(path))
    return path


def llama3_style(path):
    """Byte-level BPE as Llama 3 / Qwen2 ship it: a Split regex then
    ByteLevel without its own regex, ignore_merges, a template that adds
    BOS."""
    from tokenizers import (
        decoders,
        models,
        pre_tokenizers,
        processors,
        Regex,
        Tokenizer,
    )

    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    _train(
        tok,
        700,
        ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        special_tokens=[("<|begin_of_text|>", tok.token_to_id("<|begin_of_text|>"))],
    )
    tok.save(str(path))
    return path


def _byte_tokens():
    return [f"<0x{b:02X}>" for b in range(256)]


def llama2_style(path):
    """Byte-fallback BPE as Llama 2 / Mistral ship it in tokenizer.json:
    Prepend + Replace normalizer, no pre-tokenizer, a small alphabet so that
    rare characters fall back to <0xXX> byte tokens."""
    from tokenizers import decoders, models, normalizers, Tokenizer

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    tok.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    _train(tok, 700, ["<unk>", "<s>", "</s>"] + _byte_tokens(), limit_alphabet=80)
    tok.save(str(path))
    return path


def metaspace_style(path):
    """Byte-fallback BPE with a Metaspace pre-tokenizer (prepend first) and
    decoder, as newer SentencePiece conversions ship."""
    from tokenizers import decoders, models, pre_tokenizers, Tokenizer

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.decoder = decoders.Sequence(
        [decoders.Metaspace(prepend_scheme="first"), decoders.ByteFallback()]
    )
    _train(tok, 700, ["<unk>", "<s>", "</s>"] + _byte_tokens(), limit_alphabet=80)
    tok.save(str(path))
    return path


HF_STYLES = {
    "gpt2": (gpt2_style, "<|endoftext|> and <|im_end|>  after"),
    "llama3": (llama3_style, "<|begin_of_text|>Hi<|eot_id|>\nbye<|end_of_text|>"),
    "llama2": (llama2_style, "<s> Hello</s> there <unk>"),
    "metaspace": (metaspace_style, "<s>Hello</s> there"),
}


def sentencepiece_model(path, model_type="bpe"):
    """A SentencePiece model trained on the corpus, with byte fallback."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS * 5),
        model_writer=model,
        vocab_size=400,
        model_type=model_type,
        byte_fallback=True,
        character_coverage=0.98,
        minloglevel=2,
    )
    path.write_bytes(model.getvalue())
    return path


def tiktoken_ranks(path):
    """A tiktoken ranks file: the 256 bytes, then the merged tokens of a
    byte-level BPE trained on the corpus, in merge order. Returns the ranks
    as tiktoken.Encoding takes them."""
    bpe = json.loads(gpt2_style(path.with_suffix(".json")).read_text())
    ranks = {bytes([b]): b for b in range(256)}
    for merge in bpe["model"]["merges"]:
        left, right = merge if isinstance(merge, list) else merge.split(" ")
        ranks.setdefault(_byte_level_bytes(left + right), len(ranks))
    with open(path, "w") as f:
        for token, rank in ranks.items():
            f.write(f"{base64.b64encode(token).decode()} {rank}\n")
    return ranks


def _byte_level_bytes(text):
    """The bytes GPT-2 byte-level characters stand for."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    code_points = {}
    extra = 0
    for b in range(256):
        if b in printable:
            code_points[chr(b)] = b
        else:
            code_points[chr(256 + extra)] = b
            extra += 1
    return bytes(code_points[c] for c in text)
