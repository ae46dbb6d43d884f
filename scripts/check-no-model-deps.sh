#!/usr/bin/env bash
# Fails if any crate depends on a model or agent client, or if the sources name a model API
# host. CodeSpace never calls a model; this keeps it that way.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0

# Crates that exist to talk to a model service or to run an agent.
crates='async-openai|openai|openai-api-rs|openai_dive|anthropic|anthropic-sdk|clust|misanthropy|ollama-rs|genai|rig-core|llm|llm-chain|langchain-rust|mistralai-client|google-generative-ai-rs|gemini-rs|cohere-rust|kalosm|candle-transformers|async-anthropic|swarm-rs|autogpt'
if [ -f Cargo.lock ]; then
  hits=$(grep -E "^name = \"($crates)\"$" Cargo.lock || true)
  if [ -n "$hits" ]; then
    echo "check-no-model-deps: Cargo.lock contains model or agent clients:" >&2
    echo "$hits" >&2
    status=1
  fi
fi
for manifest in $(git ls-files '*Cargo.toml'); do
  hits=$(grep -nE "^[[:space:]]*($crates)[[:space:]]*=" "$manifest" || true)
  if [ -n "$hits" ]; then
    echo "check-no-model-deps: $manifest depends on a model or agent client:" >&2
    echo "$hits" >&2
    status=1
  fi
done

# Hosts of model APIs must not appear in code (this script is the one place that names them).
hosts='api\.openai\.com|api\.anthropic\.com|generativelanguage\.googleapis\.com|api\.mistral\.ai|api\.cohere\.(ai|com)|api\.groq\.com|openrouter\.ai|api\.together\.xyz|api\.deepseek\.com|aiplatform\.googleapis\.com|openai\.azure\.com|bedrock-runtime'
hits=$(git ls-files -- '*.rs' '*.toml' '*.py' '*.sh' '*.json' | grep -v '^scripts/check-no-model-deps.sh$' | xargs -r grep -nE "$hosts" || true)
if [ -n "$hits" ]; then
  echo "check-no-model-deps: model API hosts named in sources:" >&2
  echo "$hits" >&2
  status=1
fi

if [ "$status" -eq 0 ]; then
  echo "check-no-model-deps: ok (no model or agent client, no model API host)"
fi
exit "$status"
