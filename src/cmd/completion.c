/*
 * completion.c — shell completion scripts, written from the command table
 * (commands.c) so they offer exactly the commands and flags the parser
 * takes. bash: a completion function (`complete -F`); zsh: the same
 * function through bashcompinit; fish: `complete` lines. Each completes
 * `headroom` and `kubectl-headroom`. bash splits `--flag=value` at the
 * '=' (COMP_WORDBREAKS): the function looks past it. kubectl: the
 * executable kubectl_complete-headroom that kubectl (>= 1.26) runs to
 * complete `kubectl headroom …` — the same bash function, driven by the
 * words kubectl passes, answering in Cobra's protocol (one candidate a line,
 * then a ":DIRECTIVE" line). The words only a live cluster or the
 * kubeconfig knows (namespaces, pods, nodes, contexts: complete.h) come
 * from the hidden `headroom __complete`, run by every script through the
 * name being completed (bash and zsh: _headroom_live, fish:
 * __headroom_live).
 */
#include "cmd/completion.h"

#include "cmd/commands.h"
#include "cmd/complete.h"

#include <stdio.h>
#include <string.h>

static const char *const shells = "bash zsh fish kubectl";

const hr_command hr_completion_command = {
    "completion",
    "bash|zsh|fish|kubectl",
    "A shell completion script: bash, zsh, fish, or kubectl's plugin.",
    "For example:\n"
    "  source <(headroom completion bash)        # in ~/.bashrc\n"
    "  source <(headroom completion zsh)         # in ~/.zshrc, after compinit\n"
    "  headroom completion fish > ~/.config/fish/completions/headroom.fish\n"
    "kubectl: the executable kubectl_complete-headroom, which kubectl (>= 1.26) runs to\n"
    "complete `kubectl headroom ...`; the install step puts it beside kubectl-headroom.\n"
    "Namespaces (-n), pods (explain), nodes (node) and the kubeconfig's contexts come\n"
    "from the cluster and the kubeconfig the line names, 3 s at most, else nothing.\n",
    NULL,
    0,
    1,
    hr_cmd_completion,
};

static void word_list(FILE *f, const hr_command *c)
{
    for (size_t i = 0; i < c->n_flags; i++) {
        fprintf(f, "%s--%s", i ? " " : "", c->flags[i].name);
        if (c->flags[i].short_name)
            fprintf(f, " -%c", c->flags[i].short_name);
    }
    fprintf(f, "%s--help", c->n_flags ? " " : "");
}

static void bash(FILE *f)
{
    fputs("# bash completion for headroom and kubectl-headroom (headroom completion bash)\n"
          "# The live words (namespaces, pods, nodes, contexts): `headroom __complete\n"
          "# WORD... CUR` prints one a line, then a \":DIRECTIVE\" line.\n"
          "_headroom_live() {\n"
          "    local hr=${COMP_WORDS[0]} line\n"
          "    command -v \"$hr\" >/dev/null 2>&1 || return 0\n"
          "    while IFS= read -r line; do\n"
          "        case $line in :*) break ;; ?*) COMPREPLY+=(\"$line\") ;; esac\n"
          "    done < <(\"$hr\" __complete \"${COMP_WORDS[@]:1:COMP_CWORD-1}\" \"$cur\" "
          "2>/dev/null)\n"
          "}\n"
          "_headroom() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local cmd= i flags=\n"
          "    if [[ $cur == = ]]; then cur=; elif [[ $prev == = ]]; then\n"
          "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
          "    fi\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
          "    done\n"
          "    COMPREPLY=()\n"
          "    case $cmd in\n"
          "    '')\n"
          "        COMPREPLY=($(compgen -W \"",
          f);
    for (size_t i = 0; i < hr_n_commands; i++)
        fprintf(f, "%s%s", i ? " " : "", hr_commands[i]->name);
    fputs(" --help --version\" -- \"$cur\"))\n        return ;;\n", f);
    for (size_t i = 0; i < hr_n_commands; i++) {
        const hr_command *c = hr_commands[i];
        fprintf(f, "    %s)\n        case $prev in\n", c->name);
        for (size_t k = 0; k < c->n_flags; k++) {
            const hr_flag *fl = &c->flags[k];
            if (!hr_flag_takes_value(fl))
                continue;
            fprintf(f, "        --%s", fl->name);
            if (fl->short_name)
                fprintf(f, " | -%c", fl->short_name);
            if (fl->choices && !strcmp(fl->choices, "@file"))
                fputs(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", f);
            else if (fl->choices && !strcmp(fl->choices, "@dir"))
                fputs(") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", f);
            else if (fl->choices)
                fprintf(f, ") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n",
                        fl->choices);
            else if (hr_complete_live_flag(fl))
                fputs(") _headroom_live; return ;;\n", f);
            else
                fputs(") return ;;\n", f);
        }
        fputs("        esac\n", f);
        if (hr_complete_live_arg(c))
            fputs("        [[ $cur == -* ]] || { _headroom_live; [[ ${#COMPREPLY[@]} -eq 0 ]] || "
                  "return; }\n",
                  f);
        if (!strcmp(c->name, "help")) {
            fputs("        flags=\"", f);
            for (size_t k = 0; k < hr_n_commands; k++)
                fprintf(f, "%s%s", k ? " " : "", hr_commands[k]->name);
            fputs("\"\n", f);
        } else if (!strcmp(c->name, "completion")) {
            fprintf(f, "        flags=\"%s --help\"\n", shells);
        } else {
            fputs("        flags=\"", f);
            word_list(f, c);
            fputs("\"\n", f);
        }
        fputs("        ;;\n", f);
    }
    fputs("    *) return ;;\n"
          "    esac\n"
          "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
          "}\n"
          "complete -F _headroom headroom kubectl-headroom\n",
          f);
}

static void fish_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s && *s != '\n'; s++) {
        if (*s == '\'' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

static void fish(FILE *f)
{
    fputs("# fish completion for headroom and kubectl-headroom (headroom completion fish)\n"
          "# The live words (namespaces, pods, nodes, contexts): `headroom __complete\n"
          "# WORD... CUR` prints one a line, then a \":DIRECTIVE\" line.\n"
          "function __headroom_live\n"
          "    set -l words (commandline -opc)\n"
          "    command $words[1] __complete $words[2..-1] (commandline -ct) 2>/dev/null | "
          "string match -v -r '^:'\n"
          "end\n",
          f);
    static const char *const bins[] = {"headroom", "kubectl-headroom"};
    for (size_t b = 0; b < 2; b++) {
        fprintf(f, "complete -c %s -f\n", bins[b]);
        for (size_t i = 0; i < hr_n_commands; i++) {
            const hr_command *c = hr_commands[i];
            fprintf(f, "complete -c %s -n __fish_use_subcommand -a %s -d ", bins[b], c->name);
            fish_quote(f, c->summary);
            fputc('\n', f);
            for (size_t k = 0; k < c->n_flags; k++) {
                const hr_flag *fl = &c->flags[k];
                fprintf(f, "complete -c %s -n '__fish_seen_subcommand_from %s' -l %s", bins[b],
                        c->name, fl->name);
                if (fl->short_name)
                    fprintf(f, " -s %c", fl->short_name);
                if (hr_flag_takes_value(fl))
                    fputs(" -r", f);
                if (fl->choices && fl->choices[0] == '@')
                    fputs(" -F", f);
                else if (fl->choices)
                    fprintf(f, " -a '%s'", fl->choices);
                else if (hr_complete_live_flag(fl))
                    fputs(" -a '(__headroom_live)'", f);
                fputs(" -d ", f);
                fish_quote(f, fl->help);
                fputc('\n', f);
            }
            if (hr_complete_live_arg(c))
                fprintf(f,
                        "complete -c %s -n '__fish_seen_subcommand_from %s' -a "
                        "'(__headroom_live)'\n",
                        bins[b], c->name);
            if (!strcmp(c->name, "completion"))
                fprintf(f, "complete -c %s -n '__fish_seen_subcommand_from completion' -a '%s'\n",
                        bins[b], shells);
        }
    }
}

/* kubectl passes the words after "kubectl headroom", the last one (maybe
 * "") being completed, and reads the candidates and a Cobra directive (4:
 * no file completion; the function completes file names itself). */
static void kubectl_plugin(FILE *f)
{
    fputs("#!/usr/bin/env bash\n"
          "# kubectl_complete-headroom: kubectl (>= 1.26) runs it to complete\n"
          "# `kubectl headroom ...` (headroom completion kubectl)\n",
          f);
    bash(f);
    fputs("words=(kubectl-headroom \"$@\")\n"
          "[ $# -gt 0 ] || words+=('')\n"
          "cur=${words[${#words[@]}-1]} prefix=\n"
          "# bash would have split --flag=value at the '=' (COMP_WORDBREAKS); kubectl does not.\n"
          "if [[ $cur == -*=* ]]; then\n"
          "    prefix=${cur%%=*}=\n"
          "    words=(\"${words[@]:0:${#words[@]}-1}\" \"${cur%%=*}\" = \"${cur#*=}\")\n"
          "fi\n"
          "COMP_WORDS=(\"${words[@]}\") COMP_CWORD=$((${#words[@]} - 1)) COMPREPLY=()\n"
          "_headroom\n"
          "for c in \"${COMPREPLY[@]}\"; do printf '%s%s\\n' \"$prefix\" \"$c\"; done\n"
          "echo :4\n",
          f);
}

int hr_cmd_completion(const char *prog, int argc, char **argv)
{
    const hr_command *c = &hr_completion_command;
    hr_args args;
    int rc = hr_args_parse(prog, c, argc, argv, &args);
    const char *shell = args.n_pos ? args.pos[0] : NULL;
    hr_args_free(&args);
    if (rc != HR_EXIT_OK || args.help)
        return rc;
    if (shell == NULL)
        return hr_usage_error(prog, c, "which shell? bash, zsh, fish or kubectl");
    if (!strcmp(shell, "bash")) {
        bash(stdout);
    } else if (!strcmp(shell, "zsh")) {
        fputs("#compdef headroom kubectl-headroom\n"
              "# zsh completion (headroom completion zsh): the bash function, through "
              "bashcompinit\n"
              "autoload -U +X bashcompinit && bashcompinit\n",
              stdout);
        bash(stdout);
    } else if (!strcmp(shell, "fish")) {
        fish(stdout);
    } else if (!strcmp(shell, "kubectl")) {
        kubectl_plugin(stdout);
    } else {
        return hr_usage_error(prog, c, "no completion for \"%s\": bash, zsh, fish or kubectl",
                              shell);
    }
    return fflush(stdout) == 0 ? HR_EXIT_OK : HR_EXIT_INPUT;
}
