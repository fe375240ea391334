package qlab.pipeline.beam;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.Validation;

/** Options of a sweep run; the runner's own options come on top. */
public interface SweepOptions extends PipelineOptions {

    @Description("Sweep file (configs/*.yaml) with the model, the axes and the measurements")
    @Validation.Required
    String getSweepFile();

    void setSweepFile(String value);

    @Description("Results directory: each run adds runs/RUN_ID/results.parquet; re-running with the same "
            + "directory measures only the configs that have no ok row there")
    @Validation.Required
    String getOut();

    void setOut(String value);

    @Description("Directory of cached importance matrices and quantized checkpoints (default: OUT/.cache)")
    String getCacheDir();

    void setCacheDir(String value);

    @Description("Class implementing qlab.pipeline.EvaluatorFactory with a public no-argument constructor")
    String getEvaluatorFactory();

    void setEvaluatorFactory(String value);

    @Description("Print a live progress line and a summary on stderr")
    @Default.Boolean(true)
    boolean getProgress();

    void setProgress(boolean value);

    @Description("Write charts and report.html from all results in OUT after the run")
    @Default.Boolean(true)
    boolean getReport();

    void setReport(boolean value);
}
