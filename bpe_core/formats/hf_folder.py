"""What `transformers` needs besides a `tokenizer.json`: the roles of the special tokens, the
BERT/RoBERTa template that adds them around a sequence, `tokenizer_config.json` and
`special_tokens_map.json`, so `AutoTokenizer.from_pretrained(folder)` gives a tokenizer with its
unk, pad, mask, cls and sep tokens.

Roles come from the special tokens' names only (`[UNK]` or `<unk>`, `[CLS]` or `<s>`, ...): a
tokenizer without such tokens (GPT-2 style) gets no template, so its `tokenizer.json` is what it
always was. This module writes no `tokenizer.json` and reads no file.
"""

import json
import os
from typing import Any

from bpe_core.files import atomic_output

# role -> the names that take it, BERT's first, then RoBERTa's; GPT-2 ends documents with <|endoftext|>
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "unk_token": ("[UNK]", "<unk>"),
    "pad_token": ("[PAD]", "<pad>"),
    "mask_token": ("[MASK]", "<mask>"),
    "cls_token": ("[CLS]", "<s>"),
    "sep_token": ("[SEP]", "</s>"),
    "bos_token": ("<s>",),
    "eos_token": ("</s>", "<|endoftext|>"),
}
CONFIG_FILE = "tokenizer_config.json"
MAP_FILE = "special_tokens_map.json"


def special_token_roles(special_ids: dict[str, int]) -> dict[str, str]:
    """`transformers`' role name -> special token, for the roles whose token this tokenizer has."""
    roles: dict[str, str] = {}
    for role, names in ROLE_NAMES.items():
        token = next((name for name in names if name in special_ids), None)
        if token is not None:
            roles[role] = token
    return roles


def _piece(kind: str, name: str, type_id: int) -> dict[str, Any]:
    return {kind: {"id": name, "type_id": type_id}}


def template_post_processor(special_ids: dict[str, int]) -> dict[str, Any] | None:
    """Hugging Face's TemplateProcessing that adds `[CLS] A [SEP]` (and `[CLS] A [SEP] B [SEP]`,
    B with type id 1) as BERT does, or `<s> A </s>` (and `<s> A </s></s> B </s>`) as RoBERTa
    does; None when the tokenizer has neither pair."""
    if "[CLS]" in special_ids and "[SEP]" in special_ids:
        first = "[CLS]"
        last = "[SEP]"
        single = [_piece("SpecialToken", first, 0), _piece("Sequence", "A", 0), _piece("SpecialToken", last, 0)]
        pair = [*single, _piece("Sequence", "B", 1), _piece("SpecialToken", last, 1)]
    elif "<s>" in special_ids and "</s>" in special_ids:
        first = "<s>"
        last = "</s>"
        single = [_piece("SpecialToken", first, 0), _piece("Sequence", "A", 0), _piece("SpecialToken", last, 0)]
        pair = [*single, _piece("SpecialToken", last, 0), _piece("Sequence", "B", 0), _piece("SpecialToken", last, 0)]
    else:
        return None
    return {
        "type": "TemplateProcessing",
        "single": single,
        "pair": pair,
        "special_tokens": {name: {"id": name, "ids": [special_ids[name]], "tokens": [name]} for name in (first, last)},
    }


def write_transformers_files(directory: str, special_ids: dict[str, int], max_length: int | None = None) -> None:
    """`tokenizer_config.json` and `special_tokens_map.json` in `directory`, beside its
    `tokenizer.json`; with `max_length`, the config's `model_max_length` (without one,
    transformers takes inputs of any length and says so as 1e30)."""
    roles = special_token_roles(special_ids)
    config: dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",  # the tokenizer.json holds everything else
        "clean_up_tokenization_spaces": False,  # decoding gives the text back exactly
        **roles,
    }
    if max_length is not None:
        config["model_max_length"] = max_length
    for name, content in ((CONFIG_FILE, config), (MAP_FILE, roles)):
        with atomic_output(os.path.join(directory, name)) as handle:
            handle.write(json.dumps(content, ensure_ascii=False, indent=1) + "\n")
