"""Prices a parcel by weight and destination, from the post office's 2026 tariff."""
import argparse

# Pence per parcel: a base price and a price per started 500 g, by destination.
TARIFF = {"UK": (395, 120), "EU": (1150, 340), "US": (1690, 520), "world": (1990, 610)}
MAX_GRAMS = 30000


def get_args():
    parser = argparse.ArgumentParser(
        prog="quote_postage",
        description="Price of posting one parcel, in pounds sterling.",
    )
    parser.add_argument("--weight-grams", type=int, required=True, help="the parcel's weight in grams")
    parser.add_argument(
        "--destination",
        required=True,
        choices=sorted(TARIFF),
        help="where the parcel goes",
    )
    return parser


def main():
    args = get_args().parse_args()
    if args.weight_grams <= 0 or args.weight_grams > MAX_GRAMS:
        print(f"A parcel must weigh between 1 and {MAX_GRAMS} grams; {args.weight_grams} g cannot be sent.")
        return
    base, per_step = TARIFF[args.destination]
    steps = (args.weight_grams + 499) // 500
    pence = base + per_step * steps
    print(f"Posting {args.weight_grams} g to {args.destination} costs £{pence // 100}.{pence % 100:02d}.")


if __name__ == "__main__":
    main()
