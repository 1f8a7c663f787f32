# bash completion for coroscope(1): subcommands, their options, the PIDs
# of Python processes for `dump`, files for `core`, and the command line
# after `run ... --`.  `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/coroscope; or source it.
# Works with and without the bash-completion package.

# PIDs of the processes that look like CPython: the executable is named
# python*, or a libpython is mapped (uwsgi and other embedders).  Two
# processes in all, whatever the number of PIDs: find and grep.
_coroscope_python_pids()
{
	{
		find /proc/[0-9]*/exe -maxdepth 0 \
			\( -lname '*/python' -o -lname '*/python[0-9]*' \) \
			-printf '%h\n' 2>/dev/null
		grep -l -s -e '/libpython[0-9]' /proc/[0-9]*/maps 2>/dev/null
	} | sed -n 's,^/proc/\([0-9][0-9]*\).*,\1,p' | sort -n -u
}

_coroscope()
{
	local cur prev cmd i dashdash=0
	local general='-h --help -V --version'
	local dump_opts='-j --json -l --locals -n --no-block --retries -f
		--format --native --native-all --max-frames --no-source --all
		--max-items'
	local core_opts='-j --json -l --locals -f --format --native --native-all
		--max-frames --no-source --all --max-items --sysroot
		--lib-search-path'
	local run_opts='-t --timeout -r --report -k --kill-after --no-native
		--no-source --sample-last --all --'
	local watch_opts='-i --interval -f --for -s --stuck -j --json
		-n --no-block --native --all'

	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# The subcommand: the first word after coroscope not an option.
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ -z $cmd && ${COMP_WORDS[i]} != -* ]]; then
			cmd=${COMP_WORDS[i]}
		elif [[ $cmd == run && ${COMP_WORDS[i]} == -- ]]; then
			dashdash=$i
			break
		fi
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$general" -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'dump run core watch help' -- "$cur"))
		fi
		return 0
	fi

	case $prev in
	-i | --interval | --for | -s | --stuck)
		[[ $cmd == watch ]] &&
			COMPREPLY=($(compgen -W '0.5s 1s 10s 1m' -- "$cur")) &&
			return 0
		;;
	-f | --format)
		[[ $cmd == watch ]] &&
			COMPREPLY=($(compgen -W '10s 1m 10m' -- "$cur")) &&
			return 0
		[[ $cmd == dump || $cmd == core ]] &&
			COMPREPLY=($(compgen -W 'text json dot' -- "$cur"))
		[[ $dashdash -eq 0 ]] && return 0
		;;
	--retries)
		[[ $cmd == dump ]] && COMPREPLY=($(compgen -W '0 3 10' -- "$cur"))
		return 0
		;;
	--max-items)
		[[ $cmd == dump || $cmd == core ]] &&
			COMPREPLY=($(compgen -W '2 8 20 100' -- "$cur"))
		return 0
		;;
	--sysroot | --lib-search-path)
		[[ $cmd == core ]] && COMPREPLY=($(compgen -d -- "$cur"))
		return 0
		;;
	-r | --report)
		[[ $cmd == run && $dashdash -eq 0 ]] &&
			COMPREPLY=($(compgen -f -- "$cur")) && return 0
		;;
	-t | --timeout | -k | --kill-after)
		[[ $cmd == run && $dashdash -eq 0 ]] &&
			COMPREPLY=($(compgen -W '30s 5m 20m 1h' -- "$cur")) &&
			return 0
		;;
	--sample-last)
		[[ $cmd == run && $dashdash -eq 0 ]] &&
			COMPREPLY=($(compgen -W '0 5s 10s 1m' -- "$cur")) &&
			return 0
		;;
	esac

	case $cmd in
	watch)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$watch_opts $general" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_coroscope_python_pids)" -- "$cur"))
		fi
		;;
	dump)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$dump_opts $general" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_coroscope_python_pids)" -- "$cur"))
		fi
		;;
	core)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$core_opts $general" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	run)
		if ((dashdash == 0)); then
			[[ $cur == -* ]] &&
				COMPREPLY=($(compgen -W "$run_opts $general" -- "$cur"))
		elif ((COMP_CWORD == dashdash + 1)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		elif declare -F _command_offset >/dev/null; then
			# bash-completion: complete the command's own arguments.
			_command_offset $((dashdash + 1))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	esac
	return 0
}

complete -F _coroscope coroscope
