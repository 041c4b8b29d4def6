#!/usr/bin/env bash
# Creates benchmarks/llm_judges/.venv: RAGAS, DeepEval, tiktoken and VERA (editable, with the
# OpenAI and Anthropic extras), kept apart from VERA's own .venv so the peers' dependencies never touch it.
#
#   bash benchmarks/llm_judges/setup_venv.sh            # pinned versions (requirements.txt)
#   bash benchmarks/llm_judges/setup_venv.sh --latest   # newest versions, then re-pin
#
# LangChain stays below 1.0: ragas 0.4.3 imports langchain_community.chat_models.vertexai,
# which langchain-community 0.4 removed, so an unconstrained install cannot import ragas.
# bpe-openai ships tiktoken's vocabulary files; tokens.py copies them (sha256-checked) into
# a tiktoken cache, since tiktoken would otherwise download them and there is no internet.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"

export DEEPEVAL_TELEMETRY_OPT_OUT=YES RAGAS_DO_NOT_TRACK=true DO_NOT_TRACK=1

# A checkout from before the link was removed from the repository can still hold a .venv
# symlink to another machine's folder: `venv` refuses it ("File exists"). A link that points
# nowhere is removed; one that points to a folder is a choice of this machine's and is used.
if [[ -L "$venv" && ! -e "$venv" ]]; then
    echo "removing $venv: a symlink to $(readlink "$venv"), which does not exist here"
    rm "$venv"
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [[ "${1:-}" == "--latest" ]]; then
    "$venv/bin/pip" install --quiet ragas deepeval tiktoken bpe-openai \
        "langchain<1" "langchain-core<1" "langchain-community<0.4" "langchain-openai<1"
    { echo "# Pinned by setup_venv.sh --latest on $(date -u +%Y-%m-%d) (Python $("$venv/bin/python" -V | cut -d' ' -f2))."
      "$venv/bin/pip" freeze --exclude-editable | grep -v '^vera-eval'; } > "$here/requirements.txt"
    echo "re-pinned $here/requirements.txt"
else
    "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
fi
"$venv/bin/pip" install --quiet -c "$here/requirements.txt" -e "$root[openai,anthropic]"
"$venv/bin/pip" check
"$venv/bin/python" "$here/tokens.py" --seed-cache
"$venv/bin/python" - <<'PY'
from importlib.metadata import version
print("ready:", ", ".join(f"{p} {version(p)}" for p in
      ("vera-eval", "ragas", "deepeval", "openai", "instructor", "langchain-core", "tiktoken")))
PY
