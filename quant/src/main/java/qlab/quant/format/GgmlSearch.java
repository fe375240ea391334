package qlab.quant.format;

/**
 * The scale and level searches of llama.cpp's k-quant and IQ4 quantizers (ggml-quants.c), written
 * to give the same float bits as ggml compiled without fused multiply-add: every operation is a
 * float32 operation in C's left-to-right order ({@code w*x*l} is {@code (w*x)*l}), {@code MIN} and
 * {@code MAX} are C's ternaries (so a NaN operand behaves as in C), and {@link #nearestInt} is
 * ggml's magic-number rounding. Arrays of C {@code uint8_t} levels are int arrays holding
 * {@code value & 0xFF}; of {@code int8_t}, the signed value.
 */
final class GgmlSearch {
    private GgmlSearch() {
    }

    /** ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it quantizes to zero. */
    static final float GROUP_MAX_EPS = 1e-15f;

    /** The IQ4 grid (kvalues_iq4nl): 16 levels, sorted. */
    static final byte[] IQ4_VALUES = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    /**
     * ggml's nearest_int: adds 1.5 × 2^23 in float (round half to even) and reads the low mantissa
     * bits. Exact for |v| ≤ 4194303; outside that, and for inf or NaN, the same bits C computes.
     */
    static int nearestInt(float v) {
        int i = Float.floatToRawIntBits(v + 12582912f);
        return (i & 0x007fffff) - 0x00400000;
    }

    /** C's MAX(a, b) on floats: {@code a > b ? a : b}. */
    static float cmax(float a, float b) {
        return a > b ? a : b;
    }

    /** C's MIN(a, b) on floats: {@code a < b ? a : b}. */
    static float cmin(float a, float b) {
        return a < b ? a : b;
    }

    /** C's sqrtf: correctly rounded (the double square root of a float rounds to the same float). */
    static float sqrtf(float v) {
        return (float) Math.sqrt(v);
    }

    /**
     * GGML_FP32_TO_FP16: round to nearest even, overflow to ±inf, NaN to the quiet NaN 0x7E00 with
     * the input's sign.
     */
    static short toFp16(float v) {
        if (Float.isNaN(v)) {
            return (short) ((Float.floatToRawIntBits(v) >>> 16 & 0x8000) | 0x7E00);
        }
        return Float.floatToFloat16(v);
    }

    static float fromFp16(short h) {
        return Float.float16ToFloat(h);
    }

    /** The fp16 rounding of v, widened back: what ggml reads after storing v as a scale. */
    static float viaFp16(float v) {
        return fromFp16(toFp16(v));
    }

    /**
     * best_index_int8: index of the level of {@code values} (sorted, n a power of two) nearest to x;
     * x at the exact midpoint of two levels takes the upper one. Compared as 2x against the sum of
     * the two levels, which is exact.
     */
    static int bestIndex(byte[] values, float x) {
        float x2 = x + x;
        int idx = 0;
        for (int step = values.length >> 1; step > 0; step >>= 1) {
            int j = idx + step;
            idx = x2 >= (float) (values[j - 1] + values[j]) ? j : idx;
        }
        return idx;
    }

    /**
     * make_qx_quants with rmse_type 1: symmetric levels −nmax..nmax−1 for x[off .. off + n), stored
     * as level + nmax into L[lOff ..]; weights qw[qwOff ..] or, when qw is null, x². Tries the
     * scale max/−nmax and 18 nearby ones, keeping the least weighted squared error; returns the
     * least-squares scale of the chosen levels.
     */
    static float makeQxQuants(int n, int nmax, float[] x, int off, int[] L, int lOff, float[] qw, int qwOff) {
        float max = largestMagnitude(x, off, n);
        if (Math.abs(max) < GROUP_MAX_EPS) {
            for (int i = 0; i < n; i++) {
                L[lOff + i] = 0;
            }
            return 0f;
        }
        float iscale = (float) -nmax / max;
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; i++) {
            float xi = x[off + i];
            int l = clampSymmetric(nearestInt(iscale * xi), nmax);
            L[lOff + i] = l + nmax;
            float w = qw != null ? qw[qwOff + i] : xi * xi;
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        float scale = suml2 != 0 ? sumlx / suml2 : 0f;
        float best = scale * sumlx;
        for (int is = -9; is <= 9; is++) {
            if (is == 0) {
                continue;
            }
            iscale = -(nmax + 0.1f * is) / max;
            sumlx = 0;
            suml2 = 0;
            for (int i = 0; i < n; i++) {
                float xi = x[off + i];
                int l = clampSymmetric(nearestInt(iscale * xi), nmax);
                float w = qw != null ? qw[qwOff + i] : xi * xi;
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            if (suml2 > 0 && sumlx * sumlx > best * suml2) {
                for (int i = 0; i < n; i++) {
                    L[lOff + i] = nmax + clampSymmetric(nearestInt(iscale * x[off + i]), nmax);
                }
                scale = sumlx / suml2;
                best = scale * sumlx;
            }
        }
        return scale;
    }

    /** The first of x[off .. off + n) with the largest magnitude, with its sign; 0 when all are 0. */
    static float largestMagnitude(float[] x, int off, int n) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; i++) {
            float ax = Math.abs(x[off + i]);
            if (ax > amax) {
                amax = ax;
                max = x[off + i];
            }
        }
        return max;
    }

    /** MAX(−nmax, MIN(nmax − 1, l)). */
    private static int clampSymmetric(int l, int nmax) {
        return Math.max(-nmax, Math.min(nmax - 1, l));
    }

    /**
     * make_q3_quants with do_rmse: symmetric levels as {@link #makeQxQuants}, weights x², then up to
     * five passes moving single levels while the weighted fit improves. Levels + nmax into L.
     */
    static float makeQ3Quants(int n, int nmax, float[] x, int off, int[] L, int lOff) {
        float max = largestMagnitude(x, off, n);
        if (Math.abs(max) < GROUP_MAX_EPS) {
            for (int i = 0; i < n; i++) {
                L[lOff + i] = 0;
            }
            return 0f;
        }
        float iscale = (float) -nmax / max;
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; i++) {
            float xi = x[off + i];
            int l = clampSymmetric(nearestInt(iscale * xi), nmax);
            L[lOff + i] = l;
            float w = xi * xi;
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        for (int itry = 0; itry < 5; itry++) {
            int changed = 0;
            for (int i = 0; i < n; i++) {
                float xi = x[off + i];
                float w = xi * xi;
                int li = L[lOff + i];
                float slx = sumlx - w * xi * li;
                if (slx > 0) {
                    float sl2 = suml2 - w * li * li;
                    int newL = clampSymmetric(nearestInt(xi * sl2 / slx), nmax);
                    if (newL != li) {
                        slx += w * xi * newL;
                        sl2 += w * newL * newL;
                        if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                            L[lOff + i] = newL;
                            sumlx = slx;
                            suml2 = sl2;
                            changed++;
                        }
                    }
                }
            }
            if (changed == 0) {
                break;
            }
        }
        for (int i = 0; i < n; i++) {
            L[lOff + i] += nmax;
        }
        return suml2 > 0f ? sumlx / suml2 : 0f;
    }

    /**
     * make_qkx2_quants (the plain k-quant search): levels 0..nmax with a scale and a min ≤ 0 for
     * x[off .. off + n), weights w[..n). Starts from (max − min)/nmax, then fits scale and min by
     * weighted least squares for nstep + 1 trial scales, keeping the least weighted error (squared,
     * or absolute with useMad). Returns the scale; mins[minIndex] receives −min.
     */
    static float makeQkx2Quants(int n, int nmax, float[] x, int off, float[] weights, int[] L, int lOff,
                                float[] mins, int minIndex, int[] laux, float rmin, float rdelta, int nstep,
                                boolean useMad) {
        return makeQkxQuants(n, nmax, x, off, weights, L, lOff, mins, minIndex, laux, rmin, rdelta, nstep, useMad, false);
    }

    /**
     * make_qkx3_quants (the importance-weighted k-quant search): {@link #makeQkx2Quants} with
     * squared error and the trial levels taken as nearest_int(min(v, nmax)) for v > 0, else 0.
     */
    static float makeQkx3Quants(int n, int nmax, float[] x, int off, float[] weights, int[] L, int lOff,
                                float[] mins, int minIndex, int[] laux, float rmin, float rdelta, int nstep) {
        return makeQkxQuants(n, nmax, x, off, weights, L, lOff, mins, minIndex, laux, rmin, rdelta, nstep, false, true);
    }

    private static float makeQkxQuants(int n, int nmax, float[] x, int off, float[] weights, int[] L, int lOff,
                                       float[] mins, int minIndex, int[] laux, float rmin, float rdelta, int nstep,
                                       boolean useMad, boolean cappedTrials) {
        float min = x[off];
        float max = x[off];
        float sumW = weights[0];
        float sumX = sumW * x[off];
        for (int i = 1; i < n; i++) {
            float xi = x[off + i];
            if (xi < min) {
                min = xi;
            }
            if (xi > max) {
                max = xi;
            }
            float w = weights[i];
            sumW += w;
            sumX += w * xi;
        }
        if (min > 0) {
            min = 0;
        }
        if (max <= min) {
            for (int i = 0; i < n; i++) {
                L[lOff + i] = 0;
            }
            mins[minIndex] = -min;
            return 0f;
        }
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestError = 0;
        for (int i = 0; i < n; i++) {
            int l = nearestInt(iscale * (x[off + i] - min));
            l = Math.max(0, Math.min(nmax, l));
            L[lOff + i] = l;
            float diff = scale * l + min - x[off + i];
            diff = useMad ? Math.abs(diff) : diff * diff;
            bestError += weights[i] * diff;
        }
        for (int is = 0; is <= nstep; is++) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0;
            float sumL2 = 0;
            float sumXL = 0;
            for (int i = 0; i < n; i++) {
                int l;
                if (cappedTrials) {
                    float v = iscale * (x[off + i] - min);
                    l = v > 0 ? nearestInt(cmin(v, nmax)) : 0;
                } else {
                    l = Math.max(0, Math.min(nmax, nearestInt(iscale * (x[off + i] - min))));
                }
                laux[i] = l;
                float w = weights[i];
                sumL += w * l;
                sumL2 += w * l * l;
                sumXL += w * l * x[off + i];
            }
            float det = sumW * sumL2 - sumL * sumL;
            if (det > 0) {
                float thisScale = (sumW * sumXL - sumX * sumL) / det;
                float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXL / sumL2;
                }
                float error = 0;
                for (int i = 0; i < n; i++) {
                    float diff = thisScale * laux[i] + thisMin - x[off + i];
                    diff = useMad ? Math.abs(diff) : diff * diff;
                    error += weights[i] * diff;
                }
                if (error < bestError) {
                    System.arraycopy(laux, 0, L, lOff, n);
                    bestError = error;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        mins[minIndex] = -min;
        return scale;
    }

    /**
     * make_qp_quants: non-negative levels 0..nmax for the n non-negative values x (sub-block
     * scales or mins) under weights qw; tries max/nmax and 8 nearby scales, then up to five
     * passes moving single levels. Returns the least-squares scale of the chosen levels.
     */
    static float makeQpQuants(int n, int nmax, float[] x, int[] L, float[] qw) {
        float max = 0;
        for (int i = 0; i < n; i++) {
            max = cmax(max, x[i]);
        }
        if (max < GROUP_MAX_EPS) {
            for (int i = 0; i < n; i++) {
                L[i] = 0;
            }
            return 0f;
        }
        float iscale = nmax / max;
        for (int i = 0; i < n; i++) {
            L[i] = nearestInt(iscale * x[i]) & 0xFF;
        }
        float scale = 1 / iscale;
        float bestMse = 0;
        for (int i = 0; i < n; i++) {
            float diff = x[i] - scale * L[i];
            bestMse += qw[i] * diff * diff;
        }
        for (int is = -4; is <= 4; is++) {
            if (is == 0) {
                continue;
            }
            float iscaleIs = (0.1f * is + nmax) / max;
            float scaleIs = 1 / iscaleIs;
            float mse = 0;
            for (int i = 0; i < n; i++) {
                int l = Math.min(nmax, nearestInt(iscaleIs * x[i]));
                float diff = x[i] - scaleIs * l;
                mse += qw[i] * diff * diff;
            }
            if (mse < bestMse) {
                bestMse = mse;
                iscale = iscaleIs;
            }
        }
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; i++) {
            int l = Math.min(nmax, nearestInt(iscale * x[i]));
            L[i] = l & 0xFF;
            float w = qw[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        for (int itry = 0; itry < 5; itry++) {
            int changed = 0;
            for (int i = 0; i < n; i++) {
                float w = qw[i];
                float slx = sumlx - w * x[i] * L[i];
                float sl2 = suml2 - w * L[i] * L[i];
                if (slx > 0 && sl2 > 0) {
                    int newL = Math.min(nmax, nearestInt(x[i] * sl2 / slx));
                    if (newL != L[i]) {
                        slx += w * x[i] * newL;
                        sl2 += w * newL * newL;
                        if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                            L[i] = newL & 0xFF;
                            sumlx = slx;
                            suml2 = sl2;
                            changed++;
                        }
                    }
                }
            }
            if (changed == 0) {
                break;
            }
        }
        return suml2 > 0f ? sumlx / suml2 : 0f;
    }
}
