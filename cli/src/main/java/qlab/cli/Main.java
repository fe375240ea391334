package qlab.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import qlab.engine.QlabException;

/** Entry point of the qlab command line. */
@Command(name = "qlab", mixinStandardHelpOptions = true, version = "qlab 0.1.0",
        description = "A quantization lab for small LLMs.",
        footer = {"", "./qlab test runs the whole test suite."},
        subcommands = {
                GenCommand.class,
                TrainCommand.class,
                InspectCommand.class,
                LogitsCommand.class,
                GenerateCommand.class,
                ChatCommand.class,
                BenchCommand.class,
                BenchBatchCommand.class,
                PplCommand.class,
                KlCommand.class,
                CalibrateCommand.class,
                QuantizeCommand.class,
                ExportCommand.class,
                TokenizeCommand.class,
                SweepCommand.class,
                ParetoCommand.class,
                AllocateCommand.class,
                ReportCommand.class,
                ServeCommand.class,
                ServeBenchCommand.class,
                CommandLine.HelpCommand.class})
public final class Main {

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code; user errors become one line on stderr. */
    public static int run(String... args) {
        return commandLine().execute(args);
    }

    /** The configured command line (error handling included), for running in-process. */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((ex, cmd, parse) -> {
            Throwable cause = ex;
            while (cause != null && !(cause instanceof QlabException)) {
                cause = cause.getCause();
            }
            if (cause != null) {
                cmd.getErr().println("qlab: " + cause.getMessage());
                return 2;
            }
            throw ex;
        });
        // A bad option value or an unknown option: one line naming it, not the whole usage text.
        cl.setParameterExceptionHandler((ex, args) -> {
            String name = ex.getCommandLine().getCommandSpec().qualifiedName();
            ex.getCommandLine().getErr().println(name + ": " + ex.getMessage() + " (" + name + " --help lists the options)");
            return 2;
        });
        return cl;
    }
}
