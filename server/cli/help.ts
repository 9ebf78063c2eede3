/** `gpudeck help units|restart|logs…`: the remote commands' manual, written as a man page. */
export const REMOTE_HELP = `NAME
    gpudeck units | restart | start | stop | logs - drive a gpudeck panel from scripts and terminals

SYNOPSIS
    gpudeck units [HOST] [--json]
    gpudeck restart HOST:UNIT --reason TEXT [--when-gpus-free] [--wait serving|running] [--timeout 20m] [--confirm]
    gpudeck start   HOST:UNIT --reason TEXT [--when-gpus-free] [--wait serving|running] [--timeout 20m] [--confirm]
    gpudeck stop    HOST:UNIT --reason TEXT [--wait inactive] [--timeout 20m] [--confirm]
    gpudeck logs    HOST:UNIT [-f] [--since 10m] [--lines N]

DESCRIPTION
    These commands talk to a running panel over its API with an API token, as the token's owner
    (or as the service token), with the same checks as the browser: the role, the unit patterns,
    and the guard against a second restart or stop of a unit within a minute. Every action is in
    the panel's audit log as "owner (token name)", with its --reason.

    HOST is the panel's name for the GPU host (as on the Hosts page); UNIT the systemd unit, with
    or without ".service" (gpu-a:vllm-llama or gpu-a:vllm-llama.service).

COMMANDS
    units [HOST]
        The fleet's units (or one host's): host, unit, state, sub-state and readiness (whether the
        inference engine under it serves yet, or which load stage it is in).

    restart HOST:UNIT, start HOST:UNIT
        Restart (start) the unit and follow it on the panel's live stream, printing each step as
        it happens: the systemd job, state changes, the engine's load stages ("loading weights
        (37/119)", "capturing CUDA graphs"), and with --when-gpus-free the operation's steps
        (stopping, waiting-for-gpus, starting). Ends when the unit reached what --wait asks.

    stop HOST:UNIT
        Stop the unit and wait until it is inactive.

    logs HOST:UNIT
        The unit's journal (the last --lines, default 200), lines masked as the panel masks them.

OPTIONS
    --reason TEXT       Why (required for restart, start, stop; in the audit log).
    --wait STATE        serving (default for restart and start): the engine answers on its own
                        endpoint; a unit without a recognised engine counts as serving once
                        running. running: systemd says active. inactive (stop's only state).
    --timeout DURATION  Give up waiting after this long: 90s, 20m (default), 1h, 1h30m. The action
                        itself goes on in the panel.
    --when-gpus-free    Restart or start only once the memory the unit's last run held on its GPUs
                        is free (a GPU-aware operation on the host's agent).
    --confirm           Act even if someone restarted or stopped the unit within the last minute.
    -f, --follow        logs: keep printing new lines until interrupted.
    --since DURATION    logs: only lines newer than this (10m, 2h).
    --lines N           logs: how many lines to read back (1–2000, default 200).
    --json              units: one JSON document instead of a table.
    -h, --help          This text.

ENVIRONMENT
    GPUDECK_URL     The panel's base URL, e.g. https://gpudeck.example.com (required).
    GPUDECK_TOKEN   An API token (gdk_…), made on the panel's Account page (or, for machines, a
                    service token on the Users page). Without it, the token file is read.

FILES
    ~/.config/gpudeck/token ($XDG_CONFIG_HOME/gpudeck/token)
        The API token, on one line; must not be readable by other users (chmod 600).

EXIT STATUS
    0   done: the unit reached what --wait asked (units, logs: listed)
    1   failed: the job failed, the unit or its engine failed (the panel's diagnosis on stderr),
        or the panel cannot be reached
    2   usage error (a wrong option or argument, a missing GPUDECK_URL or token)
    3   timed out waiting (the action goes on; see the panel)
    4   refused by the panel: not signed in (a revoked or expired token), not allowed, a recent
        action by someone else needs --confirm, no such host or unit; the reason on stderr

EXAMPLES
    gpudeck units gpu-a
    gpudeck restart gpu-a:vllm-llama --reason "deploy $CI_COMMIT_SHORT_SHA" --wait serving --timeout 20m
    gpudeck restart gpu-a:vllm-llama --reason "free the GPUs first" --when-gpus-free
    gpudeck stop gpu-b:vllm-old --reason "retired"
    gpudeck logs gpu-a:vllm-llama --since 10m -f
`;
