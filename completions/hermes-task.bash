_hermes_task_completion() {
    local IFS=$'
'
    COMPREPLY=( $( env COMP_WORDS="${COMP_WORDS[*]}" \
                   COMP_CWORD=$COMP_CWORD \
                   _HERMES_TASK_COMPLETE=complete_bash $1 ) )
    return 0
}

complete -o default -F _hermes_task_completion hermes-task
