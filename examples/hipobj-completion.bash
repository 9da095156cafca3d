# bash completion of the `hipobj` tool: commands, the options of each
# command, local paths, and s3:// URLs from the server itself (`hipobj
# __complete WORD` lists buckets, then the keys and "directories" under the
# prefix typed, with the endpoint and credentials options already on the
# line). Installed as share/bash-completion/completions/hipobj; to try it
# from a checkout: source examples/hipobj-completion.bash

_hipobj() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n : || return
  else
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local commands="cp sync mv ls rm mb rb stat presign mpu info bench help"
  local global="--endpoint-url --region --profile --no-sign-request
    --no-verify-ssl --ca-bundle --io-threads --json --quiet --debug --help
    --version"
  local xfer="--part-size --concurrency --staging-pool --rdma --integrity
    --unsigned-payload --content-type"
  local tree="--recursive --exclude --include --dryrun --jobs"

  # The command: the first word that is neither an option nor its value.
  local cmd="" i w
  for ((i = 1; i < cword; i++)); do
    w=${words[i]}
    case $w in
    --endpoint-url | --region | --profile | --ca-bundle | --io-threads | \
      --part-size | --concurrency | --staging-pool | --rdma | --integrity | \
      --content-type | --exclude | --include | --jobs | --range | \
      --expires-in | --gpu)
      ((i++))
      ;;
    -*) ;;
    *)
      cmd=$w
      break
      ;;
    esac
  done

  case $prev in
  --rdma)
    COMPREPLY=($(compgen -W "auto off require" -- "$cur"))
    return
    ;;
  --integrity)
    COMPREPLY=($(compgen -W "auto sha256 none" -- "$cur"))
    return
    ;;
  --ca-bundle)
    COMPREPLY=($(compgen -f -- "$cur"))
    return
    ;;
  --endpoint-url | --region | --profile | --io-threads | --part-size | \
    --concurrency | --staging-pool | --content-type | --exclude | \
    --include | --jobs | --range | --expires-in | --gpu)
    return
    ;;
  esac

  if [ -z "$cmd" ]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "$global" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
    return
  fi

  if [[ $cur == -* ]]; then
    local opts=$global
    case $cmd in
    cp) opts+=" $xfer $tree --range --keep-failed-upload --gpu" ;;
    mv) opts+=" $xfer $tree --keep-failed-upload" ;;
    sync) opts+=" $xfer --exclude --include --dryrun --jobs --delete
      --size-only" ;;
    rm) opts+=" $tree" ;;
    ls) opts+=" --recursive --human-readable --summarize" ;;
    presign) opts+=" --expires-in" ;;
    esac
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi

  case $cmd in
  help)
    COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    return
    ;;
  mpu)
    local n=0
    for ((i = 1; i < cword; i++)); do
      [[ ${words[i]} == ls || ${words[i]} == abort ]] && n=1
    done
    if [ $n -eq 0 ]; then
      COMPREPLY=($(compgen -W "ls abort" -- "$cur"))
      return
    fi
    ;;
  info | bench) return ;;
  esac

  if [[ $cur == s3:* ]]; then
    # The options that say where and how to connect go along.
    local conn=() j
    for ((j = 1; j < cword; j++)); do
      case ${words[j]} in
      --endpoint-url | --region | --profile | --ca-bundle)
        conn+=("${words[j]}" "${words[j + 1]}")
        ;;
      --no-sign-request | --no-verify-ssl) conn+=("${words[j]}") ;;
      esac
    done
    local IFS=$'\n'
    COMPREPLY=($(hipobj "${conn[@]}" __complete "$cur" 2>/dev/null))
    # The URL contains ':', a word break for bash: complete after it.
    if declare -F __ltrim_colon_completions >/dev/null 2>&1; then
      __ltrim_colon_completions "$cur"
    fi
    compopt -o nospace 2>/dev/null
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "s3://" -- "$cur"))
  compopt -o filenames 2>/dev/null
}

complete -F _hipobj hipobj
