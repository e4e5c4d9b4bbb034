"""The one way to load a trained classifier and its tokenizer: from a folder or from the Hugging Face Hub.

A model folder (what ``transformer.train`` writes) holds config.json, model.safetensors and
tokenizer.json, plus metrics.json and README.md. A Hub repo id goes through ``huggingface_hub``, so
the Hub cache (``HF_HOME``/``HF_HUB_CACHE``), offline mode (``HF_HUB_OFFLINE=1``) and revision
pinning behave as Hugging Face users expect.

A config.json with a ``model_type`` is a ``transformers`` checkpoint: the BERT, DistilBERT and RoBERTa
sequence classifiers load through ``transformer.hub`` (the optional extra, ``requirements-hub.txt``) as a
``HubClassifier`` with the same interface; any other ``model_type`` is refused. Such a checkpoint may be
sharded (what ``save_pretrained(max_shard_size=...)`` writes): model.safetensors.index.json and the
``model-0000k-of-0000n.safetensors`` shards it names, each a plain file name beside it, instead of
model.safetensors. Weights are safetensors only: a pickle (``pytorch_model.bin``) is never read.
"""

import importlib
import importlib.util
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch
from huggingface_hub import constants, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    HFValidationError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from tokenizers import Tokenizer

from .classifier import TransformerClassifier
from .hub.adapter import HubClassifier
from .hub.families import SUPPORTED, Family, family_of

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent.parent / "assets" / "model"
CONFIG_FILE = constants.CONFIG_NAME  # "config.json"
WEIGHTS_FILE = constants.SAFETENSORS_SINGLE_FILE  # "model.safetensors"
INDEX_FILE = constants.SAFETENSORS_INDEX_FILE  # "model.safetensors.index.json": a sharded checkpoint's tensor map
TOKENIZER_FILE = "tokenizer.json"
METRICS_FILE = "metrics.json"
REQUIRED_FILES = (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE)
# Read when present: the dev accuracy, and the explorer's corpus views (``transformer.explorer.corpus.model_files``).
OPTIONAL_FILES = (
    METRICS_FILE, "head_atlas.json", "errors.json", "behaviour.json", "faithfulness.json", "training.json"
)  # fmt: skip
PICKLE_WEIGHTS = "pytorch_model.bin"  # never loaded: unpickling runs code
HUB_EXTRA = "pip install -r requirements-hub.txt"
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+|[A-Za-z0-9][\w.-]*")
_SHARD_NAME = re.compile(r"\w[\w.-]*\.safetensors")  # a plain file name: no folder, no "..", no drive


class ModelLoadError(Exception):
    """A model could not be loaded; the message names the source and what is wrong."""


@dataclass(frozen=True)
class LoadedModel:
    """A classifier ready for inference, with the tokenizer it was trained with.

    Attributes:
        model: in eval mode, on ``device``: ours, or a ``transformers`` classifier behind the same interface.
        tokenizer: the ``tokenizer.json`` saved beside the weights (normaliser included).
        source: the folder path or Hub repo id it was loaded from.
        revision: the Hub revision asked for (None for a folder or the default branch).
        device: where the model's parameters live.
        metrics: the parsed metrics.json, or {} when the source has none.
        folder: the local folder the files were read from (for a Hub repo, its snapshot in the cache).
    """

    model: TransformerClassifier | HubClassifier
    tokenizer: Tokenizer
    source: str
    revision: str | None
    device: torch.device
    metrics: dict = field(default_factory=dict)
    folder: Path | None = None


def load_model(
    source: str | Path = DEFAULT_MODEL_DIR, revision: str | None = None, device: str | torch.device | None = None
) -> LoadedModel:
    """Load a trained classifier and its tokenizer.

    Args:
        source: a local model folder, or a Hub repo id such as ``"owner/name"``. A string names a folder
            when that folder exists or when it cannot be a repo id (``./x``, ``/abs/path``, ``a/b/c``).
        revision: Hub branch, tag or commit; only for repo ids.
        device: torch device; default CUDA when available, else CPU.

    Returns:
        A ``LoadedModel`` with the model in eval mode on ``device``.

    Raises:
        ModelLoadError: the folder or a required file is missing, the repo or revision is not on the
            Hub (or not in the cache while offline), the files are corrupt or do not match each other, or a
            ``transformers`` checkpoint is of another family or needs the extra that is not installed.
    """
    device = torch.device(device) if device is not None else default_device()
    if isinstance(source, Path) or Path(source).is_dir() or not _REPO_ID.fullmatch(source):
        if revision is not None:
            raise ModelLoadError(f"{source}: revision {revision!r} given, but a local folder has no revisions")
        folder, where = _check_folder(Path(source)), str(source)
    else:
        folder, where = _download(source, revision), f"{source} (revision {revision or 'main'})"
    config = _read_config(folder, where)
    if isinstance(config, dict) and config.get("model_type") is not None:
        model, tokenizer = _read_hub_model(folder, where, device, config)
    else:
        model, tokenizer = _read_own_model(folder, where, device, config)
    metrics = _read_metrics(folder / METRICS_FILE, where)
    return LoadedModel(model.eval(), tokenizer, str(source), revision, device, metrics, folder)


def default_device() -> torch.device:
    """CUDA when available, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _check_folder(folder: Path) -> Path:
    """Return ``folder`` if it holds every required file, else raise a ModelLoadError naming what is missing."""
    if not folder.is_dir():
        raise ModelLoadError(f"{folder}: no such model folder")
    model_type = _model_type(folder / CONFIG_FILE)
    if model_type is not None:  # another family is refused before anything else is looked at
        _family(model_type, str(folder))
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if WEIGHTS_FILE in missing and CONFIG_FILE not in missing and (folder / INDEX_FILE).is_file():
        _refuse_own_shards(model_type, str(folder))
        names = shard_names(folder / INDEX_FILE, str(folder))
        absent = [name for name in names if not (folder / name).is_file()]
        if absent:
            raise ModelLoadError(
                f"{folder}: missing the shard {absent[0]}{f' (and {len(absent) - 1} more)' if len(absent) > 1 else ''}"
                f" of the {len(names)} that {INDEX_FILE} names; put every shard beside the index"
            )
        missing.remove(WEIGHTS_FILE)
    if WEIGHTS_FILE in missing and (folder / PICKLE_WEIGHTS).is_file():
        raise ModelLoadError(_pickle_only(str(folder)))
    if missing:
        raise ModelLoadError(
            f"{folder}: missing {', '.join(missing)} (a model folder needs {', '.join(REQUIRED_FILES)}; a transformers "
            f"checkpoint may hold {INDEX_FILE} and its shards instead of {WEIGHTS_FILE})"
        )
    return folder


def shard_names(index: Path, where: str) -> list[str]:
    """The shard files a sharded checkpoint's index names, sorted, each a plain ``.safetensors`` name beside it.

    Raises:
        ModelLoadError: the index is not valid JSON or not a safetensors index, or names a file elsewhere
            (``../x.safetensors``, an absolute path, a subfolder) or not a safetensors file.
    """
    try:
        content = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"{where}: {INDEX_FILE} is not valid JSON ({error})") from None
    weight_map = content.get("weight_map") if isinstance(content, dict) else None
    if not isinstance(weight_map, dict) or not weight_map or not isinstance(content.get("metadata"), dict):
        raise ModelLoadError(
            f"{where}: {INDEX_FILE} is not a safetensors index (it needs a metadata object and a weight_map of "
            "tensor names to shard files); save the checkpoint again with save_pretrained"
        )
    for name in weight_map.values():
        if not isinstance(name, str) or not _SHARD_NAME.fullmatch(name):
            raise ModelLoadError(
                f"{where}: {INDEX_FILE} names the shard {name!r}, which is not a .safetensors file beside the "
                "index; a shard must be a plain file name such as model-00001-of-00002.safetensors"
            )
    return sorted(set(weight_map.values()))


def _refuse_own_shards(model_type, where: str) -> None:
    """Sharded weights are for ``transformers`` checkpoints: the tutorial's format reads one model.safetensors."""
    if model_type is None:
        raise ModelLoadError(
            f"{where}: sharded weights ({INDEX_FILE}) with the tutorial's TransformerClassifier config.json, which "
            f"loads from one {WEIGHTS_FILE} only; save the model again as a single {WEIGHTS_FILE}"
        )


def _download(repo_id: str, revision: str | None) -> Path:
    """Fetch the model files of a Hub repo through the Hub cache; return the snapshot folder.

    config.json comes first: a ``transformers`` checkpoint needs only the three required files, ours also
    takes the optional ones that are there.
    """
    where = f"{repo_id} (revision {revision or 'main'})"
    config = _fetch(repo_id, revision, CONFIG_FILE, where)
    model_type = _model_type(config)
    if model_type is not None:  # refuse another family before downloading its weights
        _family(model_type, where)
    paths = {CONFIG_FILE: config, **_fetch_weights(repo_id, revision, where, model_type, config.parent)}
    for name in (TOKENIZER_FILE, *(OPTIONAL_FILES if model_type is None else ())):
        paths[name] = _fetch(repo_id, revision, name, where)
    folders = {path.parent for path in paths.values() if path is not None}
    if len(folders) != 1:
        raise ModelLoadError(f"{where}: the files resolved to different snapshots: {sorted(map(str, folders))}")
    return folders.pop()


def _fetch_weights(repo_id: str, revision: str | None, where: str, model_type, snapshot: Path) -> dict[str, Path]:
    """{name: path} of the weights: model.safetensors, else model.safetensors.index.json and each shard it names.

    Every file is asked for by name, safetensors only: a pickle is never downloaded; one already in the
    cache (``snapshot``) only makes the error say why the repo cannot be loaded.
    """
    try:
        return {WEIGHTS_FILE: _fetch(repo_id, revision, WEIGHTS_FILE, where)}
    except ModelLoadError:
        index = _fetch(repo_id, revision, INDEX_FILE, where, optional=True)
        if index is None:
            if (snapshot / PICKLE_WEIGHTS).is_file():
                raise ModelLoadError(_pickle_only(where)) from None
            raise
    _refuse_own_shards(model_type, where)
    shards = {name: _fetch(repo_id, revision, name, where) for name in shard_names(index, where)}
    return {INDEX_FILE: index, **shards}


def _fetch(repo_id: str, revision: str | None, name: str, where: str, optional: bool = False) -> Path | None:
    """One file of a Hub repo, through the cache; None for a missing optional file, else a ModelLoadError.

    The optional files are ``OPTIONAL_FILES`` and any ``name`` asked for with ``optional``.
    """
    optional = optional or name in OPTIONAL_FILES
    try:
        return Path(hf_hub_download(repo_id, name, revision=revision))
    except RepositoryNotFoundError:
        raise ModelLoadError(
            f"{repo_id}: no such model repo on the Hub (or it is private and no token is set), "
            "and no local folder of that name"
        ) from None
    except RevisionNotFoundError:
        raise ModelLoadError(f"{repo_id}: revision {revision!r} does not exist") from None
    except LocalEntryNotFoundError:
        if optional:
            return None
        if constants.HF_HUB_OFFLINE:
            raise ModelLoadError(
                f"{where}: {name} is not in the Hugging Face cache and HF_HUB_OFFLINE is set "
                "(and there is no local folder of that name); download it once while online"
            ) from None
        raise ModelLoadError(f"{where}: cannot reach the Hub to download {name} and it is not cached") from None
    except EntryNotFoundError:
        if optional:
            return None
        if name == WEIGHTS_FILE:
            raise ModelLoadError(
                f"{where}: the repo has no {WEIGHTS_FILE} (nor {INDEX_FILE} with shards); the explorer loads "
                "safetensors only"
            ) from None
        raise ModelLoadError(f"{where}: the repo has no {name}") from None
    except HFValidationError as error:
        raise ModelLoadError(f"{repo_id}: not a valid Hub repo id or revision ({error})") from None


def _pickle_only(where: str) -> str:
    """The one-line error for a checkpoint whose weights are only a pickle file."""
    return (
        f"{where}: missing {WEIGHTS_FILE}: only pickle weights ({PICKLE_WEIGHTS}), which the explorer never "
        "unpickles; it loads safetensors only"
    )


def _model_type(config_path: Path) -> str | None:
    """config.json's ``model_type`` (a ``transformers`` checkpoint), or None: ours, or unreadable (reported later)."""
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return config.get("model_type") if isinstance(config, dict) else None


def _read_tokenizer(path: Path, where: str) -> Tokenizer:
    """Parse tokenizer.json."""
    try:
        return Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises a bare Exception for unreadable files
        raise ModelLoadError(f"{where}: {TOKENIZER_FILE} is not a valid tokenizer file ({error})") from None


def _read_config(folder: Path, where: str):
    """Parse config.json (any JSON value; the readers check its shape)."""
    try:
        return json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"{where}: {CONFIG_FILE} is not valid JSON ({error})") from None


def _read_own_model(folder: Path, where: str, device: torch.device, config) -> tuple[TransformerClassifier, Tokenizer]:
    """Our classifier and its tokenizer, checked against each other."""
    tokenizer = _read_tokenizer(folder / TOKENIZER_FILE, where)
    model = _read_model(folder, where, device, config)
    if tokenizer.get_vocab_size() != model.embedding.num_embeddings:
        raise ModelLoadError(
            f"{where}: {TOKENIZER_FILE} has {tokenizer.get_vocab_size()} tokens but the model's embedding has "
            f"{model.embedding.num_embeddings} rows; the files come from different models"
        )
    return model, tokenizer


def _read_model(folder: Path, where: str, device: torch.device, config) -> TransformerClassifier:
    """Build the classifier from config.json and load model.safetensors strictly, straight onto ``device``."""
    if not isinstance(config, dict) or "vocab_size" not in config or "num_classes" not in config:
        raise ModelLoadError(f"{where}: {CONFIG_FILE} lacks vocab_size or num_classes; not a classifier config")
    try:
        return TransformerClassifier.from_pretrained(folder, strict=True, map_location=str(device))
    except ValueError as error:  # corrupt or mismatched weights, as the classifier reports them
        raise ModelLoadError(f"{where}: {error}") from None
    except TypeError as error:  # config.json has arguments the classifier does not take
        raise ModelLoadError(f"{where}: {CONFIG_FILE} does not fit TransformerClassifier ({error})") from None


def _family(model_type, where: str) -> Family:
    """The family of a ``transformers`` checkpoint's ``model_type``; a ModelLoadError naming those that work if none."""
    family = family_of(model_type) if isinstance(model_type, str) else None
    if family is None:
        raise ModelLoadError(
            f"{where}: a transformers checkpoint of model_type {model_type!r}; the explorer loads sequence "
            f"classifiers of these families only: {SUPPORTED}"
        )
    return family


def _read_hub_model(folder: Path, where: str, device: torch.device, config: dict) -> tuple[HubClassifier, Tokenizer]:
    """A ``transformers`` classifier of a supported family, wrapped, and its tokenizer (``transformer.hub``)."""
    model_type = config["model_type"]
    family = _family(model_type, where)
    weights = WEIGHTS_FILE if (folder / WEIGHTS_FILE).is_file() else INDEX_FILE  # what the checks above vetted
    if config.get("transformers_weights", weights) != weights:  # transformers would read that file instead
        raise ModelLoadError(
            f"{where}: {CONFIG_FILE} sets transformers_weights to {config['transformers_weights']!r}; the explorer "
            f"reads {WEIGHTS_FILE} or {INDEX_FILE} and its shards only: remove that key"
        )
    needs = f"{where}: a {model_type} checkpoint needs the transformers extra: {HUB_EXTRA}"
    if importlib.util.find_spec("transformers") is None:
        raise ModelLoadError(needs)
    try:
        hub_loading = importlib.import_module(".hub.loading", __package__)
    except ImportError as error:
        raise ModelLoadError(f"{needs} (importing it failed: {error})") from None
    try:
        return hub_loading.read_hub_model(folder, family, device)
    except hub_loading.HubLoadError as error:
        raise ModelLoadError(f"{where}: {error}") from None


def _read_metrics(path: Path, where: str) -> dict:
    """Parse metrics.json; {} when there is none."""
    if not path.is_file():
        return {}
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"{where}: {METRICS_FILE} is not valid JSON ({error})") from None
    if not isinstance(metrics, dict):
        raise ModelLoadError(f"{where}: {METRICS_FILE} is not a JSON object")
    return metrics
