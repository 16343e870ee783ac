# Sourced by the recipes' run.sh scripts.
#
# expand_args FILE prints FILE's lines, less blank and '#' lines, with every ${NAME}
# replaced by the value of the shell variable NAME; a NAME that is not set is an error.
expand_args() {
    local line name
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in '' | '#'*) continue ;; esac
        while [[ $line =~ \$\{([A-Za-z_][A-Za-z0-9_]*)\} ]]; do
            name=${BASH_REMATCH[1]}
            if [ -z "${!name+set}" ]; then
                echo "expand_args: $1: \${$name} is not set" >&2
                return 1
            fi
            line=${line//"\${$name}"/${!name}}
        done
        printf '%s\n' "$line"
    done < "$1"
}
