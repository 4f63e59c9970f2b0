# bash completion for reachctl(1), the client of reachd(8).
_reachctl() {
    local cur prev cmd i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="status monitor wait check probe simulate"
    local common="--socket --help --version"

    case $prev in
        --socket)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --interface)
            COMPREPLY=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur"))
            return ;;
        --changes)
            local fields="cellular connectivity connectivityCheck expensive flags gateways interfaces ipv4 ipv4Connectivity ipv6 ipv6Connectivity primary probe reachable routing simulated status vpn"
            local done=${cur%"${cur##*,}"}
            COMPREPLY=($(compgen -P "$done" -W "$fields" -- "${cur##*,}"))
            compopt -o nospace 2>/dev/null
            return ;;
        --connectivity)
            COMPREPLY=($(compgen -W "unknown none portal limited full" -- "$cur"))
            return ;;
        --family)
            COMPREPLY=($(compgen -W "ipv4 ipv6" -- "$cur"))
            return ;;
        --script)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --timeout|--after|--port|--stable|--for)
            return ;;
    esac

    cmd=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --socket) ((i++)) ;;
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done

    local options
    case $cmd in
        "")      COMPREPLY=($(compgen -W "$commands $common" -- "$cur")); return ;;
        status)  options="--json --verbose" ;;
        monitor) options="--json --after --status-only --changes" ;;
        wait)    options="--timeout --internet --interface --family --stable -q" ;;
        check)   options="--port --json --watch"
                 if [[ $cur != -* ]]; then
                     COMPREPLY=($(compgen -A hostname -- "$cur"))
                     return
                 fi ;;
        probe)   options="--json" ;;
        simulate) options="--connectivity --expensive --for --reset --script"
                 if [[ $cur != -* ]]; then
                     COMPREPLY=($(compgen -W "notReachable unknown ethernet wifi wwan wwan2G wwan3G wwan4G wwan5G" -- "$cur"))
                     return
                 fi ;;
        *)       return ;;
    esac
    COMPREPLY=($(compgen -W "$options $common" -- "$cur"))
}
complete -F _reachctl reachctl
