package qlab.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import qlab.engine.util.ProgressLine;
import qlab.engine.util.StatusLine;

/**
 * --progress: the progress line of a long command (rate and ETA, on stderr). Shown on its own when
 * stderr is a terminal and the output is not --json; --progress shows it anyway, as whole lines
 * every ten seconds where stderr is a file or a pipe. stdout never carries it.
 */
final class ProgressOption {

    @Option(names = "--progress",
            description = "Show the progress line (rate, ETA) on stderr even when it is not a terminal or with --json.")
    boolean forced;

    ProgressLine open(CommandSpec spec, String label, long total, String unit, boolean json) {
        boolean terminal = StatusLine.stderrIsTerminal();
        if (!forced && (!terminal || json)) {
            return ProgressLine.hidden();
        }
        return new ProgressLine(label, total, unit, spec.commandLine().getErr(), terminal);
    }
}
