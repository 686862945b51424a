"""Tells where a parcel is, from the tracking events the post office holds."""
import argparse

EVENTS = {
    "PP204817GB": "Delivered to the front door, 3 Dec 2026 at 11:42.",
    "PP390552GB": "Out for delivery from the Leeds depot, 7 Dec 2026.",
    "PP118834GB": "Held at customs in Frankfurt since 4 Dec 2026: a customs fee is due.",
    "PP775019GB": "Collected from the sender, 6 Dec 2026; expected in 2 working days.",
    "PP662140GB": "Returned to the sender: nobody was home after three attempts.",
}


def get_args():
    parser = argparse.ArgumentParser(
        prog="track_parcel",
        description="The latest status of a parcel, by its tracking number.",
    )
    parser.add_argument("tracking_number", help="the tracking number, e.g. PP204817GB")
    return parser


def main():
    args = get_args().parse_args()
    number = args.tracking_number.strip().upper().replace(" ", "")
    status = EVENTS.get(number)
    if status is None:
        print(f"No parcel with tracking number {args.tracking_number} is known.")
    else:
        print(f"{number}: {status}")


if __name__ == "__main__":
    main()
