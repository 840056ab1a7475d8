#!/bin/sh
# Run one of autograph's hook scripts for the Claude Code plugin, unless
# init.py installed autograph's own skill and hooks where this session
# looks (the project's .claude/ or the user's): they answer the same calls,
# and one answer per call is enough.  exec: one process either way.
#   unless-init.sh guard.py [ARGS...]    unless-init.sh session.py start
for installed in "$CLAUDE_PROJECT_DIR/.claude/skills/autograph" "${CLAUDE_CONFIG_DIR:-$HOME/.claude}/skills/autograph"; do
  if [ -f "$installed/.autograph-install.json" ] && [ -f "$installed/scripts/guard.py" ]; then
    exit 0
  fi
done
script=$1
shift
# the completion checkpoint is a plugin option, off unless the user turned it on
if [ "$script $1" = "session.py stop" ] && [ "$CLAUDE_PLUGIN_OPTION_CHECKPOINT" != true ] && [ "$CLAUDE_PLUGIN_OPTION_CHECKPOINT" != 1 ]; then
  exit 0
fi
exec python3 "$(dirname "$0")/../skills/autograph/scripts/$script" "$@"
