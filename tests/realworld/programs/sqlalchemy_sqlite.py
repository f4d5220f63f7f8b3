"""SQLAlchemy's ORM on a SQLite database in the project's data directory."""

from sqlalchemy import ForeignKey, create_engine, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Region(Base):
    __tablename__ = "region"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    sales: Mapped[list["Sale"]] = relationship(back_populates="region")


class Sale(Base):
    __tablename__ = "sale"
    id: Mapped[int] = mapped_column(primary_key=True)
    amount: Mapped[float]
    region_id: Mapped[int] = mapped_column(ForeignKey("region.id"))
    region: Mapped[Region] = relationship(back_populates="sales")


engine = create_engine("sqlite:///data/sales.db")
Base.metadata.drop_all(engine)
Base.metadata.create_all(engine)
with Session(engine) as session:
    north, east = Region(name="north"), Region(name="east")
    session.add_all([Sale(amount=120.5, region=north), Sale(amount=42.25, region=north)])
    session.add(Sale(amount=310.0, region=east))
    session.commit()
    query = (
        select(Region.name, func.sum(Sale.amount))
        .join(Sale)
        .group_by(Region.name)
        .order_by(Region.name)
    )
    for name, total in session.execute(query):
        print(f"{name}: {total:.2f}")
