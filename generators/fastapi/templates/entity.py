

class {{ entity.name }}(BaseModel):
    """One {{ entity.slug }} record."""

{% for member in entity.members %}
{% if member.kind == "status" %}
    {{ member.name }}: Literal[{% for state in member.states %}{{ state.name|tojson }}{% if not loop.last %}, {% endif %}{% endfor %}] = {{ member.initial.name|tojson }}
{% else %}
    {{ member.name }}: {{ member.annotation }}
{% endif %}
{% endfor %}
{% for status in entity.statuses %}

# The {{ status.name }} flow: the label of each state, and the states it may move to.
{{ status.constant }}_LABELS = {
{% for state in status.states %}
    {{ state.name|tojson }}: {{ state.label|tojson }},
{% endfor %}
}
{{ status.constant }}_NEXT = {
{% for state in status.states %}
    {{ state.name|tojson }}: ({% for next in state.next %}{{ next.name|tojson }},{% if not loop.last %} {% endif %}{% endfor %}),
{% endfor %}
}
# The states a record may be in: a value the database checks.
{{ status.constant }}_STATES = Table("{{ status.table }}", metadata, Column("name", Text, primary_key=True))
{% endfor %}

# The {{ entity.slug }} records, numbered from 1 in the order they were made.
{{ entity.table }} = Table(
    "{{ entity.slug }}",
    metadata,
    Column("id", Integer, primary_key=True),
{% for member in entity.members %}
    Column("{{ member.name }}", {{ member.column }}),
{% endfor %}
)
{% for status in entity.statuses %}
STATE_COLUMNS.append(({{ status.constant }}_STATES, {{ entity.table }}.c.{{ status.name }}, list({{ status.constant }}_LABELS)))
{% endfor %}


def fetch_{{ entity.slug }}(db, *where) -> list:
    """The {{ entity.slug }} records that match `where`, oldest first, each a
    dict with the titles of the records it refers to ("<relation> title")."""
    table = {{ entity.table }}
    joined = table
    titles = []
{% for member in entity.members %}
{% if member.kind == "relation" %}
    to_{{ member.name }} = {{ member.target.table }}.alias("{{ member.name }}")
    joined = joined.outerjoin(to_{{ member.name }}, to_{{ member.name }}.c.id == table.c.{{ member.name }})
    titles.append(to_{{ member.name }}.c.{{ member.target.title }}.label("{{ member.name }} title"))
{% endif %}
{% endfor %}
    query = select(table, *titles).select_from(joined).where(*where).order_by(table.c.id)
    return [dict(row._mapping) for row in db.execute(query)]


def describe_{{ entity.slug }}(row: dict) -> str:
    """One {{ entity.slug }} as the text of a list item."""
    parts = [
        label(row["id"], row["{{ entity.title_attribute.name }}"]),
{% for member in entity.members[1:] %}
{% if member.kind == "status" %}
        cell({{ entity.slug|upper }}_{{ member.name|upper }}_LABELS.get(row["{{ member.name }}"], row["{{ member.name }}"])),
{% elif member.kind == "relation" %}
        label(row["{{ member.name }}"], row["{{ member.name }} title"]),
{% else %}
        cell(row["{{ member.name }}"]),
{% endif %}
{% endfor %}
    ]
    return " · ".join(part for part in parts if part)


def conflict_{{ entity.slug }}(db, row: {{ entity.name }}, old: Optional[dict]) -> Optional[str]:
    """Why `row` cannot be stored (replacing `old`, if given), or None."""
{% for member in entity.members %}
{% if member.kind == "relation" %}
    if row.{{ member.name }} is not None and not exists(db, {{ member.target.table }}, row.{{ member.name }}):
        return "%s: there is no %s #%d." % ({{ member.label|tojson }}, {{ member.target.label|tojson }}, row.{{ member.name }})
{% elif member.kind == "status" %}
    if old is not None and row.{{ member.name }} != old["{{ member.name }}"]:
        if row.{{ member.name }} not in {{ entity.slug|upper }}_{{ member.name|upper }}_NEXT.get(old["{{ member.name }}"], ()):
            labels = {{ entity.slug|upper }}_{{ member.name|upper }}_LABELS
            return "%s: cannot move from %s to %s." % ({{ member.label|tojson }}, labels.get(old["{{ member.name }}"], old["{{ member.name }}"]), labels[row.{{ member.name }}])
{% endif %}
{% endfor %}
    return None


def make_{{ entity.slug }}(db, values: dict) -> HTMLResponse:
    """Saves a new {{ entity.slug }} made of `values`."""
    try:
        row = {{ entity.name }}.model_validate(values)
    except ValidationError as error:
        raise invalid(error)
    problem = conflict_{{ entity.slug }}(db, row, None)
    if problem is not None:
        raise Refusal(409, problem)
    key = db.execute(insert({{ entity.table }}).values(**row.model_dump())).inserted_primary_key[0]
    return saved("{{ entity.slug }}-changed", "Saved %s #%d." % ({{ entity.label_lower|tojson }}, key))


def change_{{ entity.slug }}(db, key: Optional[int], sent: str, changes: dict) -> HTMLResponse:
    """Saves `changes` to {{ entity.slug }} `key`; a status moves only if no
    other request moved it first."""
    table = {{ entity.table }}
    found = db.execute(select(table).where(table.c.id == key)).first() if key is not None else None
    if found is None:
        raise Refusal(404, "There is no %s #%s." % ({{ entity.label_lower|tojson }}, sent))
    old = {name: value for name, value in found._mapping.items() if name != "id"}
    try:
        row = {{ entity.name }}.model_validate({**old, **changes})
    except ValidationError as error:
        raise invalid(error)
    problem = conflict_{{ entity.slug }}(db, row, old)
    if problem is not None:
        raise Refusal(409, problem)
    written = db.execute(
        update(table)
        .where(table.c.id == key)
{% for status in entity.statuses %}
        .where(table.c.{{ status.name }} == old["{{ status.name }}"])
{% endfor %}
        .values(**row.model_dump())
    )
    if written.rowcount != 1:
        raise Refusal(409, "Another change to %s #%d came first; reload the page and try again." % ({{ entity.label_lower|tojson }}, key))
    return saved("{{ entity.slug }}-changed", "Saved %s #%d." % ({{ entity.label_lower|tojson }}, key))
