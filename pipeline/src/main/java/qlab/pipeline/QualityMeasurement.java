package qlab.pipeline;

import java.io.Serializable;

/**
 * Quality of a quantized model against its fp32 reference on the evaluation text.
 *
 * @param ppl       perplexity of the quantized model
 * @param pplSe     standard error of the perplexity
 * @param klMean    mean KL divergence (reference || quantized) per token, in nats
 * @param klSe      standard error of klMean
 * @param klP99     99th percentile of the per-token KL divergence
 * @param top1Agree fraction of tokens where both models rank the same token first
 */
public record QualityMeasurement(double ppl, double pplSe, double klMean, double klSe, double klP99,
                                 double top1Agree) implements Serializable {

    /** The first value that is not a finite number, by name, or null when all are finite. */
    public String firstNonFinite() {
        double[] values = {ppl, pplSe, klMean, klSe, klP99, top1Agree};
        String[] names = {"ppl", "ppl_se", "kl_mean", "kl_se", "kl_p99", "top1_agree"};
        for (int i = 0; i < values.length; i++) {
            if (!Double.isFinite(values[i])) {
                return names[i] + " is " + values[i];
            }
        }
        return null;
    }
}
