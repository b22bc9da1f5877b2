#!/usr/bin/env python3
"""A PyTorch training loop that works with dlsched (doc/user-guide.md, dlsched-jobs(7)).

It reports each epoch and each checkpoint (dlsched learns the job's speed from them), saves and
exits at the next iteration once dlsched asks it to stop (the checkpoint signal, or Slurm's
SIGTERM), and resumes from its checkpoint when the job runs again after a requeue or a resize,
possibly on another number of GPUs. Replace build_model() and build_data() with your own.
"""
import os
import sys
import time

import dlsched_progress as dp  # PREFIX/share/dlsched/python (PYTHONPATH in train.sbatch)

# First of all: from here the checkpoint signal and SIGTERM only set a flag (a request that arrives
# while torch loads, which takes seconds, is then kept rather than killing the job).
dp.install_checkpoint_handler()

import torch  # noqa: E402


def build_model():
    return torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))


def build_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8192, 32, generator=g)
    y = torch.randint(0, 10, (8192,), generator=g)
    return torch.utils.data.TensorDataset(x, y)


def batches(data, epoch, batch_size):
    """The epoch's batches, in an order fixed by the epoch number: a job resumed mid-epoch skips
    exactly the batches it had trained on."""
    order = torch.randperm(len(data), generator=torch.Generator().manual_seed(epoch))
    return [order[i:i + batch_size] for i in range(0, len(data), batch_size)]


def main():
    epochs = int(dp.epochs_total() or 10)  # --dl-epochs
    ckpt_dir = dp.checkpoint_dir() or os.getcwd()  # --dl-checkpoint-dir
    path = os.path.join(ckpt_dir, "checkpoint.pt")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = build_model().to(device)
    net = torch.nn.DataParallel(model) if torch.cuda.device_count() > 1 else model
    gpus = dp.gpus() or 1  # this run's GPUs: a resize changes them
    batch_size = 64 * gpus  # the same per-GPU batch at any size, the learning rate scaled with it
    opt = torch.optim.SGD(model.parameters(), lr=0.01 * gpus, momentum=0.9)
    data = build_data()

    epoch, step = 0, 0  # whole epochs done, batches done in the next one
    if os.path.exists(path):
        t0 = time.time()
        state = torch.load(path, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        for group in opt.param_groups:
            group["lr"] = 0.01 * gpus
        epoch, step, steps_then = state["epoch"], state["step"], state["steps"]
        # The data seen is what counts; with another batch size, start the epoch's batches over.
        step = step * state["batch_size"] // batch_size
        dp.checkpoint_loaded(epoch + step / max(1, steps_then), path, time.time() - t0)
        print(f"resumed at epoch {epoch} + {step} batches on {gpus} GPU(s), run {dp.restart_count()}", flush=True)

    loss = None
    while epoch < epochs:
        plan = batches(data, epoch + 1, batch_size)
        for idx in plan[step:]:
            x, y = data[idx]
            loss = torch.nn.functional.cross_entropy(net(x.to(device)), y.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if dp.checkpoint_requested() and step < len(plan):
                break
        if step == len(plan):
            epoch, step = epoch + 1, 0
            dp.epoch_done(epoch)
            print(f"epoch {epoch}: loss {loss.item() if loss is not None else float('nan'):.3f}", flush=True)
        if dp.checkpoint_requested() or epoch == epochs:
            tmp = path + ".tmp"
            with dp.saving(path, epoch + step / len(plan)):  # times the save, reports its size
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch,
                            "step": step, "steps": len(plan), "batch_size": batch_size}, tmp)
                os.replace(tmp, path)  # a save cut short never replaces the last good one
            if dp.checkpoint_requested():
                print(f"checkpointed at epoch {epoch} + {step} batches; exiting to be requeued", flush=True)
                sys.exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
