"""Which format a file holds, told from its name (and, for a `.json` tokenizer, its top-level
keys), so that the command line needs `--format` only where a name does not say.

Nothing here converts or validates a file: it answers "which reader" and leaves the reading,
and the errors about content, to the format modules.
"""

import json
import os

from bpe_core.errors import BpeError
from bpe_core.files import read_json

TIKTOKEN_SUFFIXES = (".tiktoken", ".tiktoken.gz")
BIN_SUFFIXES = (".bin",)
TEXT_ID_SUFFIXES = (".ids", ".txt")
HF_FILE = "tokenizer.json"
SHARD_INDEX = "index.json"
SHARDS_FORMAT = "bpe-core shards"


def is_directory_name(path: str) -> bool:
    """An existing directory, or a path ending in a separator (a directory to create)."""
    return os.path.isdir(path) or path.endswith(("/", os.sep))


def ids_format(path: str | None) -> str | None:
    """`bin` for a `.bin` file or a shard directory, `ids` for `.ids`/`.txt`; None when the name
    does not say (standard output or input, other names)."""
    if path is None or path == "-":
        return None
    if path.endswith(BIN_SUFFIXES) or is_directory_name(path):
        return "bin"
    if path.endswith(TEXT_ID_SUFFIXES):
        return "ids"
    return None


def import_format(path: str) -> str:
    """`tiktoken` or `hf` for a file to import; a BpeError when the name and shape do not say."""
    if path.endswith(TIKTOKEN_SUFFIXES):
        return "tiktoken"
    if path.endswith(".json"):
        data = read_json(path, "tokenizer.json")
        if isinstance(data, dict) and data.get("format") == "bpe-core":
            raise BpeError(f"{path} is already a bpe-core tokenizer file: use it as it is (bpe inspect {path})")
        if isinstance(data, dict) and isinstance(data.get("model"), dict):
            return "hf"
        raise BpeError(
            f'{path} has no "model" object, so it is not a Hugging Face tokenizer.json: give --format hf|tiktoken'
        )
    raise BpeError(
        f"cannot tell the format of {path} from its name (.tiktoken, .tiktoken.gz, tokenizer.json): give --format "
        "hf|tiktoken"
    )


def export_format(path: str) -> str:
    """`tiktoken` for `.tiktoken`, `hf` for `.json` or a directory; a BpeError otherwise."""
    if path.endswith(TIKTOKEN_SUFFIXES):
        return "tiktoken"
    if path.endswith(".json") or is_directory_name(path):
        return "hf"
    raise BpeError(
        f"cannot tell the format to write from {path} (.tiktoken, .json, a directory/): give --format hf|tiktoken"
    )


def shard_dtype(path: str) -> str | None:
    """The dtype the shard index beside a `.bin` file records for it, or None when no index
    lists the file. A malformed index is a BpeError naming it."""
    index_path = os.path.join(os.path.dirname(os.path.abspath(path)), SHARD_INDEX)
    if not os.path.isfile(index_path):
        return None
    index = read_json(index_path, "shard index")
    if not isinstance(index, dict) or index.get("format") != SHARDS_FORMAT:
        return None  # some other index.json: it says nothing about this file
    shards = index.get("shards")
    names = {shard.get("shard") for shard in shards if isinstance(shard, dict)} if isinstance(shards, list) else set()
    if os.path.basename(path) not in names:
        return None
    dtype = index.get("dtype")
    if dtype not in ("uint16", "uint32"):
        raise BpeError(f'{index_path}: "dtype" is {json.dumps(dtype)}; allowed: uint16, uint32')
    return str(dtype)
