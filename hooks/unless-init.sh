#!/bin/sh
# Run one of autograph's hook scripts for the Claude Code plugin, unless
# init.py installed autograph's own skill and hooks where this session
# looks (the project's .claude/ or the user's): they answer the same calls,
# and one answer per call is enough.  exec: one process either way.
#   unless-init.sh guard.py [ARGS...]    unless-init.sh session.py start
if [ "$CLAUDECODE" = 1 ]; then
  # Claude Code: init.py claude's install (its record and scripts) in the project or the user's folder
  for installed in "$CLAUDE_PROJECT_DIR/.claude/skills/autograph" "${CLAUDE_CONFIG_DIR:-$HOME/.claude}/skills/autograph"; do
    if [ -f "$installed/.autograph-install.json" ] && [ -f "$installed/scripts/guard.py" ]; then
      exit 0
    fi
  done
else
  # Codex (which runs this plugin's hooks too, in the session's folder): init.py codex's hooks file
  for hooks in "$PWD/.codex/hooks.json" "${CODEX_HOME:-$HOME/.codex}/hooks.json"; do
    if grep -qs "autograph/scripts/guard.py" "$hooks"; then
      exit 0
    fi
  done
fi
script=$1
shift
# the completion checkpoint is a plugin option, off unless the user turned it on
if [ "$script $1" = "session.py stop" ] && [ "$CLAUDE_PLUGIN_OPTION_CHECKPOINT" != true ] && [ "$CLAUDE_PLUGIN_OPTION_CHECKPOINT" != 1 ]; then
  exit 0
fi
here=$(dirname "$0")
if [ "$script" = guard.py ]; then
  # the guard sees shell calls too (Codex applies `apply_patch <<'EOF'` run there); one without
  # apply_patch in it is passed here, without starting Python
  input=$(cat)
  case "$input" in
    *'"tool_name":"Bash"'* | *'"tool_name": "Bash"'*)
      case "$input" in *apply_patch* | *applypatch*) ;; *) exit 0 ;; esac
      ;;
  esac
  printf '%s\n' "$input" | python3 "$here/../skills/autograph/scripts/guard.py" "$@"
  exit $?
fi
exec python3 "$here/../skills/autograph/scripts/$script" "$@"
