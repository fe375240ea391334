package qlab.quant.fuzz;

import qlab.engine.model.Model;
import qlab.engine.model.Transformer;
import qlab.engine.util.WorkerPool;

/** What the model fuzz targets do with a model that loaded: one forward step, so every tensor is read. */
public final class FuzzModels {

    private static final WorkerPool POOL = new WorkerPool(1);

    private FuzzModels() {}

    public static void runOneToken(Model m) {
        Transformer t = new Transformer(m, POOL);
        t.forward(new int[] {0}, t.newCache(1), true);
    }
}
