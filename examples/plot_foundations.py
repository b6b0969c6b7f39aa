"""Regenerate the course figures shown in the README, as SVG and PNG in examples/figures/.

Run from the repository root:

    python examples/plot_foundations.py            # every figure
    python examples/plot_foundations.py causal_mask attention_weights   # some of them

Each figure is drawn with NumPy and Matplotlib only; the loss curve trains notebook 10's
tiny GPT for a short run through the reference solution (`solutions/10_decoder_block.ipynb`).
The SVGs are byte-for-byte reproducible (fixed hash salt, no date), so a diff of
examples/figures/ shows only real changes. At the end the script prints the figures
with their captions as Markdown for the README.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path("examples/figures")

# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
BLUE, VERMILION, GREEN, PURPLE, ORANGE, SKY = "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"
GREY = "#555555"

plt.rcParams.update({
    "svg.hashsalt": "transformer-math-figures",  # stable SVG element ids
    "figure.dpi": 100,
    "savefig.dpi": 150,  # 7 in wide -> 1050 px PNG, sharp when the README scales it down
    "font.size": 12,
    "axes.titlesize": 14,
    "axes.labelsize": 12,
    "legend.fontsize": 11,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.2,
})

# What to notice in each figure: printed as Markdown for the README.
CAPTIONS = {
    "frequency_two_scales": (
        "Frequency at two scales",
        "The same sine/cosine pair at two angular frequencies. At omega = 0.1 rad/token the "
        "pattern repeats every 2 pi / 0.1 = 62.8 tokens, so it tells close positions apart but "
        "repeats many times over a long text; at omega = 0.01 the period is 628 tokens, too slow "
        "to separate neighbours but unique over a long range. A position encoding uses many "
        "frequencies so that together they do both.",
    ),
    "temperature": (
        "Temperature and token probability",
        "softmax(z / tau) for the logits z = [2, 1, 0]. The order of the tokens never changes; "
        "a low temperature (tau = 0.5) sharpens the distribution toward the top token (0.867), "
        "a high one (tau = 5) flattens it toward uniform (1/3 each). At tau = 1 it is the plain "
        "softmax: 0.665, 0.245, 0.090.",
    ),
    "gradient_step": (
        "One gradient step and its tangent",
        "L(w) = (w x - y)^2 with x = 2, y = 3. At w = 1 the loss is 1 and the tangent's slope, "
        "the gradient, is 2x(wx - y) = -4. Gradient descent moves against the slope: "
        "w <- 1 - 0.1 x (-4) = 1.4, and the loss falls from 1 to 0.04 (the minimum is at w = 1.5).",
    ),
    "causal_mask": (
        "The causal mask",
        "Row = the query position, column = the key position it may read. A position may look "
        "at itself and the past, never the future: row 2 keeps columns 0, 1, 2 and blocks "
        "column 3. Blocked scores are set to -inf before the softmax, so their weights are exactly 0.",
    ),
    "attention_weights": (
        "Attention weights on a small example",
        "Causal self-attention weights for six tokens, from a head whose query at position i "
        "looks for the key of position i - 1 (a previous-token head). Each row is a probability "
        "distribution over the positions a token may read (it sums to 1); everything above the "
        "diagonal is 0 because of the causal mask; from row 2 on, 0.64 of each row's weight sits just left "
        "of the diagonal, on the previous token. The first token has no past, so it reads only itself.",
    ),
    "loss_curve": (
        "The tiny GPT's loss against its baselines",
        "Validation cross-entropy (nats per token) of notebook 10's tiny GPT (2 layers, about 105k "
        "parameters) over 200 AdamW steps on its 27-word grammar. Guessing uniformly costs ln 27 = 3.30; "
        "knowing word frequencies (unigram) 2.74; knowing the previous word (bigram) 1.44. The model "
        "passes the unigram baseline within 25 steps and the bigram one by step 50, which takes more "
        "than the previous word (verb agreement reaches several tokens back), then levels off at "
        "1.08, just above the grammar's entropy rate of 1.057, below which no model can go.",
    ),
}


def save(fig: plt.Figure, name: str) -> None:
    """Write name.svg (reproducible) and name.png next to each other."""
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT / f"{name}.svg", metadata={"Date": None}, bbox_inches="tight")
    fig.savefig(OUT / f"{name}.png", metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)


def frequency_two_scales() -> plt.Figure:
    p = np.arange(0, 701)  # token positions
    fig, axes = plt.subplots(2, 1, figsize=(8, 5.6), sharex=True)
    for ax, omega in zip(axes, (0.1, 0.01)):
        period = 2 * math.pi / omega
        ax.plot(p, np.sin(omega * p), color=BLUE, label=f"sin({omega} p)")
        ax.plot(p, np.cos(omega * p), color=VERMILION, linestyle="--", label=f"cos({omega} p)")
        ax.set_ylim(-1.2, 1.75)
        ax.set_yticks([-1, 0, 1])
        ax.set_ylabel("value")
        ax.set_title(f"omega = {omega} rad/token: period 2 pi / omega = {period:.1f} tokens",
                     fontsize=12, loc="left")
        # One period, from the cosine's peak at p = 0 to its next peak, as a bracket above the curves.
        ax.annotate("", xy=(0, 1.3), xytext=(period, 1.3),
                    arrowprops=dict(arrowstyle="<->", color=GREY, lw=1.5, shrinkA=0, shrinkB=0))
        ax.axvline(period, color=GREY, linestyle=":", linewidth=1.2)
        ax.text(period + 12, 1.3, f"one period = {period:.1f} tokens", ha="left", va="center",
                fontsize=11, color=GREY, bbox=dict(facecolor="white", edgecolor="none", pad=1))
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    axes[-1].set_xlabel("token position p")
    axes[-1].set_xlim(0, 700)
    fig.suptitle("Frequency at two scales: sin and cos over token positions", fontsize=14)
    fig.tight_layout()
    return fig


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def temperature() -> plt.Figure:
    z = np.array([2.0, 1.0, 0.0])
    taus = [0.5, 1.0, 2.0, 5.0]
    styles = [(BLUE, ""), (ORANGE, "//"), (GREEN, "..")]
    fig, ax = plt.subplots(figsize=(8, 4.6))
    width = 0.26
    for k, (colour, hatch) in enumerate(styles):
        probs = [softmax(z / tau)[k] for tau in taus]
        xs = np.arange(len(taus)) + (k - 1) * width
        bars = ax.bar(xs, probs, width, color=colour, hatch=hatch, edgecolor="white" if not hatch else "black",
                      linewidth=0.6, label=f"token {k} (logit {z[k]:.0f})")
        ax.bar_label(bars, labels=[f"{q:.3f}" for q in probs], fontsize=10, padding=2,
                     bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
    ax.axhline(1 / 3, color=GREY, linestyle=":", linewidth=1.5, zorder=0, label="uniform, 1/3 each")
    ax.set_xticks(np.arange(len(taus)), [f"tau = {t:g}" for t in taus])
    ax.set_xlabel("temperature tau (lower = sharper, higher = flatter)")
    ax.set_ylabel("probability softmax(z / tau)")
    ax.set_ylim(0, 1.0)
    ax.set_title("Temperature and token probability, logits z = [2, 1, 0]")
    ax.legend(loc="upper right", frameon=True, framealpha=0.9)
    fig.tight_layout()
    return fig


def gradient_step() -> plt.Figure:
    x, y, w0, lr = 2.0, 3.0, 1.0, 0.1

    def loss(w):
        return (w * x - y) ** 2

    grad = 2 * x * (w0 * x - y)  # -4
    w1 = w0 - lr * grad  # 1.4
    w = np.linspace(0.2, 2.4, 300)
    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.plot(w, loss(w), color=BLUE, label="loss L(w) = (2w - 3)^2")
    tw = np.linspace(0.55, 1.5, 50)
    ax.plot(tw, loss(w0) + grad * (tw - w0), color=VERMILION, linestyle="--",
            label=f"tangent at w = 1, slope dL/dw = {grad:g}")
    ax.plot([w0], [loss(w0)], "o", color=VERMILION, markersize=9, zorder=3)
    ax.plot([w1], [loss(w1)], "s", color=GREEN, markersize=9, zorder=3, label="after one step, w = 1.4")
    ax.annotate("", xy=(w1, loss(w1) + 0.02), xytext=(w0 + 0.02, loss(w0)),
                arrowprops=dict(arrowstyle="->", color=GREEN, lw=2, connectionstyle="arc3,rad=-0.25"))
    ax.text(w0 + 0.06, loss(w0) + 0.12, "start: w = 1, L = 1", ha="left", va="bottom", fontsize=11)
    ax.text(0.27, 0.05, f"one step, learning rate {lr}:\nw = 1 - {lr} x ({grad:g}) = {w1:.1f}\n"
            f"L falls from {loss(w0):.0f} to {loss(w1):.2f}", ha="left", va="bottom", fontsize=11, color=GREEN)
    ax.axvline(1.5, color=GREY, linestyle=":", linewidth=1.2)
    ax.text(1.53, 1.7, "minimum\nw = 1.5", color=GREY, fontsize=10.5, va="center")
    ax.set_xlim(0.2, 2.4)
    ax.set_ylim(-0.2, 3.6)
    ax.set_xlabel("weight w   (x = 2, y = 3, learning rate 0.1)")
    ax.set_ylabel("loss L(w)")
    ax.set_title("One gradient step: move against the tangent's slope")
    ax.legend(loc="center right", frameon=True, framealpha=0.95)
    fig.tight_layout()
    return fig


def causal_mask() -> plt.Figure:
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch, Rectangle

    T = 4
    allowed = np.tril(np.ones((T, T), dtype=bool))  # key <= query
    fig, ax = plt.subplots(figsize=(6.2, 5.6))
    ax.imshow(allowed, cmap=ListedColormap(["#EEEEEE", SKY]), vmin=0, vmax=1)
    for q in range(T):
        for k in range(T):
            ax.text(k, q, "allowed" if allowed[q, k] else "blocked", ha="center", va="center",
                    fontsize=11, color="black" if allowed[q, k] else GREY,
                    fontweight="bold" if allowed[q, k] else "normal")
    # Row 2, the worked example: keeps columns 0, 1, 2.
    ax.add_patch(Rectangle((-0.5, 1.5), T, 1, fill=False, edgecolor=VERMILION, linewidth=3))
    ax.set_xticks(range(T))
    ax.set_yticks(range(T))
    ax.set_xlabel("key position (what is read)")
    ax.set_ylabel("query position (who reads)")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    ax.set_title("The causal mask, T = 4: row 2 keeps columns 0, 1, 2", pad=12)
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    ax.legend(handles=[Patch(facecolor=SKY, label="allowed (key <= query)"),
                       Patch(facecolor="#EEEEEE", edgecolor=GREY, label="blocked (future)"),
                       Patch(fill=False, edgecolor=VERMILION, linewidth=2.5, label="row 2")],
              loc="upper center", bbox_to_anchor=(0.5, -0.03), ncol=3, frameon=False, fontsize=10.5,
              handlelength=1.5, columnspacing=1.2)
    fig.tight_layout()
    return fig


def attention_example() -> tuple[list[str], np.ndarray]:
    """Causal attention weights of a previous-token head on six tokens, (T, T)."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    T, d = len(tokens), 8
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)  # (d/2,) = 1, 0.1, 0.01, 0.001

    def positions(p):  # (len(p), d) sinusoidal position vectors
        angles = np.outer(p, omega)  # (len(p), d/2)
        return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(len(p), d)

    pos = np.arange(T)
    K = positions(pos)  # (T, d): each key says where it is
    Q = 8.0 * positions(pos - 1)  # (T, d): each query asks for the previous position
    scores = Q @ K.T / math.sqrt(d)  # (T, T)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return tokens, weights


def attention_weights() -> plt.Figure:
    tokens, weights = attention_example()
    T = len(tokens)
    labels = [f"{i}: {t}" for i, t in enumerate(tokens)]
    fig, ax = plt.subplots(figsize=(7, 6))
    im = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1)
    for q in range(T):
        for k in range(T):
            w = weights[q, k]
            ax.text(k, q, f"{w:.2f}" if k <= q else "0", ha="center", va="center", fontsize=11,
                    color="white" if w > 0.6 else ("black" if k <= q else "#999999"))
    ax.set_xticks(range(T), labels, rotation=0)
    ax.set_yticks(range(T), labels)
    ax.set_xlabel("key: the token being read")
    ax.set_ylabel("query: the token reading")
    ax.set_title("Attention weights, previous-token head (causal)")
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    cbar.set_label("weight (each row sums to 1)")
    fig.tight_layout()
    return fig


class Notebook10Missing(RuntimeError):
    pass


def loss_curve() -> plt.Figure:
    try:
        from autograder.reference import ReferenceUnavailable, import_notebook
    except ImportError as exc:  # the course package is not installed
        raise Notebook10Missing(f"cannot import the course package ({exc}); run `pip install -e .`") from exc
    try:
        nb10 = import_notebook("10_decoder_block")
    except ReferenceUnavailable as exc:
        raise Notebook10Missing(
            f"{exc}: the loss curve trains notebook 10's tiny GPT, so it needs "
            "solutions/10_decoder_block.ipynb (build it with tools/build_solution.py)") from exc
    for name in NB10_NEEDS:
        if not hasattr(nb10, name):
            raise Notebook10Missing(f"solutions/10_decoder_block.ipynb defines no `{name}` in its setup, "
                                    "library or solution cells")
    return _plot_loss_curve(nb10)


NB10_NEEDS = ("make_corpus", "train_tiny_gpt", "ngram_baselines", "entropy_rate")


def _plot_loss_curve(nb10) -> plt.Figure:
    # The corpus and run of notebook 10 itself: 30,000 training sentences, 3,000 fresh ones
    # (another seed) to validate on, train_tiny_gpt's defaults (200 AdamW steps, about 6 s on one core).
    train_ids, vocab = nb10.make_corpus(30_000, seed=1)
    val_ids, _ = nb10.make_corpus(3_000, seed=2)
    V = len(vocab)
    baselines = nb10.ngram_baselines(train_ids, val_ids, V)  # {"uniform", "unigram", "bigram"}
    best = nb10.entropy_rate()
    history = nb10.train_tiny_gpt(train_ids, val_ids, V, seed=0)
    steps, val = history["step"], history["val_loss"]
    print(f"loss curve: uniform {baselines['uniform']:.3f}, unigram {baselines['unigram']:.3f}, "
          f"bigram {baselines['bigram']:.3f}, entropy rate {best:.3f}; final validation {val[-1]:.3f} nats",
          file=sys.stderr)

    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(steps, history["train_loss"], color=SKY, linewidth=1.5, label="TinyGPT, training batches")
    ax.plot(steps, val, "o-", color=BLUE, markersize=4, label="TinyGPT, validation")
    lines = [("uniform", f"uniform guess, ln {V} = {baselines['uniform']:.2f}", GREY, ":"),
             ("unigram", f"unigram (word frequencies) {baselines['unigram']:.2f}", PURPLE, "-."),
             ("bigram", f"bigram (previous word) {baselines['bigram']:.2f}", VERMILION, "--")]
    for key, label, colour, style in lines:
        ax.axhline(baselines[key], color=colour, linestyle=style, linewidth=1.8)
        ax.text(steps[-1], baselines[key] + 0.03, label, color=colour, ha="right", va="bottom", fontsize=10.5)
    ax.axhline(best, color=GREEN, linewidth=2.2)
    ax.text(steps[-1], best - 0.04, f"entropy rate {best:.3f}: no model can go lower", color=GREEN,
            ha="right", va="top", fontsize=10.5)
    ax.set_xlim(0, steps[-1])
    ax.set_ylim(0.75, max(3.7, max(history["train_loss"]) + 0.1))
    ax.set_xlabel("training step (AdamW, batches of 32 windows of 32 tokens)")
    ax.set_ylabel("cross-entropy (nats per token)")
    ax.set_title("The tiny GPT's validation loss against its baselines")
    ax.legend(loc="center right", frameon=True, framealpha=0.95)
    fig.tight_layout()
    return fig


FIGURES = {
    "frequency_two_scales": frequency_two_scales,
    "temperature": temperature,
    "gradient_step": gradient_step,
    "causal_mask": causal_mask,
    "attention_weights": attention_weights,
    "loss_curve": loss_curve,
}


def markdown(names: list[str]) -> str:
    """The figures and their captions, as a README section."""
    lines = []
    for name in names:
        title, caption = CAPTIONS[name]
        lines += [f"### {title}", "", f"![{title}](examples/figures/{name}.png)", "", caption, ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    unknown = [a for a in argv if a not in FIGURES]
    if unknown:
        print(f"unknown figure(s): {', '.join(unknown)}; choose from {', '.join(FIGURES)}", file=sys.stderr)
        return 2
    if not Path("autograder").is_dir() or not Path("examples").is_dir():
        print("run this from the repository root: python examples/plot_foundations.py", file=sys.stderr)
        return 2
    names = argv or list(FIGURES)
    made, failed = [], []
    for name in names:
        start = time.perf_counter()
        try:
            save(FIGURES[name](), name)
        except Notebook10Missing as exc:
            failed.append(name)
            print(f"FAILED {name}: {exc}", file=sys.stderr)
            continue
        made.append(name)
        print(f"wrote {OUT / name}.svg and .png ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    print(markdown(made))
    if failed:
        print(f"{len(failed)} figure(s) not made: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
