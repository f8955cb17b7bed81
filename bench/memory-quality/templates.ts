/**
 * The memory-quality set's building blocks: what a person tells an assistant over several sessions, and
 * questions about it worded differently from the turns that answer them (paraphrase, not keyword copies).
 * `{slot}` names are filled per conversation from a persona (generate.ts). Each turn carries the facts a
 * perfect extractor would keep (the scripted fake model of run.ts answers with exactly these).
 */

export interface TurnText {
  user: string;
  agent: string;
  facts: string[];
  /** Facts of an earlier turn that this turn's facts update (knowledge updates; set by generate.ts). */
  replaces?: string[];
}

/** One turn holds the answer. Temporal questions ask when it was said: the answer is its session date. */
export interface OneTurnTemplate {
  turn: TurnText;
  question: string;
  answer: string;
}

/** Two turns, in different sessions, are both needed (multi-hop) or the later one replaces the first (update). */
export interface TwoTurnTemplate {
  first: TurnText;
  second: TurnText;
  question: string;
  answer: string;
}

export const SINGLE_HOP: OneTurnTemplate[] = [
  { turn: { user: 'We finally brought home a {breed} puppy this weekend, the kids named her {pet}.', agent: 'Congratulations! Expect a lot of energy and chewed shoes.', facts: ['The user adopted a {breed} puppy named {pet}.'] },
    question: 'What kind of dog did we adopt?', answer: '{breed}' },
  { turn: { user: 'The doctor confirmed I have coeliac disease, so bread and pasta are off the table from now on.', agent: 'That is a big change; there are good alternatives made from rice and buckwheat.', facts: ['The user has coeliac disease and cannot eat gluten.'] },
    question: 'Is there any food I must stay away from for medical reasons?', answer: 'gluten' },
  { turn: { user: '{child} started violin lessons on Thursdays, the screeching is something else.', agent: 'Every violinist screeches at first; it gets better within months.', facts: ['The user\'s daughter {child} takes violin lessons on Thursdays.'] },
    question: 'Which instrument is my daughter learning to play?', answer: 'violin' },
  { turn: { user: 'I still drive the old {car} my grandfather left me, it refuses to die.', agent: 'Older cars can run forever with regular care.', facts: ['The user drives an old {car} inherited from their grandfather.'] },
    question: 'What vehicle do I own?', answer: '{car}' },
  { turn: { user: 'Planes terrify me, so whenever possible I go by train, even if it takes all day.', agent: 'Trains are calmer, and you can see the landscape.', facts: ['The user is afraid of flying and prefers trains.'] },
    question: 'How do I like to get around on long journeys?', answer: 'by train' },
  { turn: { user: 'I have read every single novel {author} has published, she is my absolute favourite.', agent: 'Then you will be waiting impatiently for her next one.', facts: ['The user\'s favourite writer is {author}.'] },
    question: 'Whose books do I love the most?', answer: '{author}' },
  { turn: { user: 'I have been practising {language} with an app every evening before our trip next year.', agent: 'A little every day is the best way to learn.', facts: ['The user is learning {language} with an app.'] },
    question: 'Which foreign language am I studying?', answer: '{language}' },
  { turn: { user: 'The blood service keeps calling me because I am O negative.', agent: 'O negative donors are valuable: anyone can receive it.', facts: ['The user\'s blood type is O negative.'] },
    question: 'What is my blood group?', answer: 'O negative' },
  { turn: { user: 'Whenever I visit my aunt, her cats make my eyes swell shut within minutes.', agent: 'That sounds like a cat allergy; antihistamines may help.', facts: ['The user is allergic to cats.'] },
    question: 'Do I react badly to any animals?', answer: 'cats' },
  { turn: { user: 'For my birthday I want to go back to {restaurant}, the tapas place where we had our first date.', agent: 'A lovely idea; book early.', facts: ['The user had their first date at {restaurant}, a tapas restaurant.'] },
    question: 'Where did I first go out with my partner?', answer: '{restaurant}' },
];

export const TEMPORAL: OneTurnTemplate[] = [
  { turn: { user: 'Just back from the dentist, two fillings and my jaw is still numb.', agent: 'Avoid hot drinks until the numbness wears off.', facts: ['The user had two dental fillings.'] },
    question: 'When did I have my teeth fixed?', answer: '{date}' },
  { turn: { user: 'I ran my first half marathon this morning, two hours and five minutes!', agent: 'Well done, that is a great first time.', facts: ['The user ran their first half marathon in 2:05.'] },
    question: 'When did I complete the 21-kilometre race?', answer: '{date}' },
  { turn: { user: 'We signed the lease on the new flat today, the keys come next week.', agent: 'Exciting! Time to start packing.', facts: ['The user signed a lease for a new flat.'] },
    question: 'When did we put our names on the rental contract for the apartment?', answer: '{date}' },
  { turn: { user: 'I passed my driving test today, on the second attempt.', agent: 'Congratulations, the roads are yours.', facts: ['The user passed their driving test.'] },
    question: 'When did I get my driver\'s licence?', answer: '{date}' },
  { turn: { user: 'My laptop died this morning, black screen, so I had to order a new one.', agent: 'I hope your files were backed up.', facts: ['The user\'s laptop broke and they ordered a replacement.'] },
    question: 'When did my computer stop working?', answer: '{date}' },
  { turn: { user: '{friend} and I walked up to the lake above the village today, my legs are done.', agent: 'Sounds like a beautiful climb.', facts: ['The user hiked to a mountain lake with {friend}.'] },
    question: 'When did I go on that mountain hike with {friend}?', answer: '{date}' },
  { turn: { user: 'I handed in my thesis this afternoon, four years of work in one PDF.', agent: 'Huge congratulations, enjoy the evening.', facts: ['The user submitted their thesis.'] },
    question: 'When did I submit my dissertation?', answer: '{date}' },
  { turn: { user: 'First pottery class tonight, I made a very wonky bowl.', agent: 'Wonky bowls are how every potter begins.', facts: ['The user attended their first pottery class.'] },
    question: 'When did I begin taking ceramics lessons?', answer: '{date}' },
  { turn: { user: 'We put the tomatoes and basil into the raised beds today.', agent: 'Water them well for the first few days.', facts: ['The user planted tomatoes and basil in raised beds.'] },
    question: 'When did I plant the vegetable seedlings in the garden?', answer: '{date}' },
  { turn: { user: 'Got my booster shot this morning and my arm is sore already.', agent: 'A sore arm is normal for a day or two.', facts: ['The user received a booster vaccination.'] },
    question: 'When was I last vaccinated?', answer: '{date}' },
];

export const MULTI_HOP: TwoTurnTemplate[] = [
  { first: { user: 'My sister {sister} moved to {city} last year for a job.', agent: 'That must be quite an adventure for her.', facts: ['The user\'s sister {sister} lives in {city}.'] },
    second: { user: '{sister} has just been made head nurse on the children\'s ward.', agent: 'Please pass on my congratulations.', facts: ['{sister} is head nurse on a children\'s ward.'] },
    question: 'What does my sister in {city} do for a living?', answer: 'head nurse on a children\'s ward' },
  { first: { user: 'My best friend {friend2} is getting married in June.', agent: 'How exciting! Are you in the wedding party?', facts: ['The user\'s best friend {friend2} gets married in June.'] },
    second: { user: 'I found a vintage record player as a present for {friend2}.', agent: 'A thoughtful and lasting gift.', facts: ['The user bought a vintage record player as a gift for {friend2}.'] },
    question: 'What am I giving my friend who is tying the knot this summer?', answer: 'a vintage record player' },
  { first: { user: 'Our neighbour {neighbour} is a retired chemistry teacher.', agent: 'Retired teachers often love to keep helping.', facts: ['The neighbour {neighbour} is a retired chemistry teacher.'] },
    second: { user: '{neighbour} offered to tutor my son before his exams.', agent: 'That is generous of them.', facts: ['{neighbour} will tutor the user\'s son for exams.'] },
    question: 'Which former science teacher is helping my boy prepare for his tests?', answer: '{neighbour}' },
  { first: { user: '{colleague} sits next to me at work and is obsessed with board games.', agent: 'Office friendships make the week go faster.', facts: ['The user\'s colleague {colleague} loves board games.'] },
    second: { user: '{colleague} lent me a copy of Wingspan for the weekend.', agent: 'Wingspan is a lovely game about birds.', facts: ['{colleague} lent the user the game Wingspan.'] },
    question: 'What did the coworker at the desk beside mine lend me?', answer: 'Wingspan' },
  { first: { user: 'My uncle {uncle} runs a bakery in {town}.', agent: 'Fresh bread every day, lucky family.', facts: ['The user\'s uncle {uncle} owns a bakery in {town}.'] },
    second: { user: '{uncle} says he will make the cake for our wedding.', agent: 'A family-made cake is special.', facts: ['{uncle} will bake the user\'s wedding cake.'] },
    question: 'What is my relative with the bakery making for us?', answer: 'the wedding cake' },
  { first: { user: 'Our book club meets at {host}\'s house every other Tuesday.', agent: 'A good rhythm for reading.', facts: ['The user\'s book club meets at {host}\'s house.'] },
    second: { user: '{host} picked The Remains of the Day for next time.', agent: 'A quiet, moving novel.', facts: ['{host} chose The Remains of the Day for the book club.'] },
    question: 'Which novel did the person who hosts our reading group choose?', answer: 'The Remains of the Day' },
  { first: { user: 'My son {son} plays in goal for the under-12 team.', agent: 'Goalkeepers need nerves of steel.', facts: ['The user\'s son {son} is a goalkeeper in an under-12 team.'] },
    second: { user: '{son} fractured his wrist in the playground today.', agent: 'Poor thing, I hope it heals quickly.', facts: ['{son} fractured his wrist.'] },
    question: 'What injury did our young keeper get?', answer: 'a fractured wrist' },
  { first: { user: 'My mentor {mentor} used to run the Berlin office.', agent: 'Experience like that is worth listening to.', facts: ['The user\'s mentor {mentor} ran the Berlin office.'] },
    second: { user: '{mentor} recommended I take a negotiation course this autumn.', agent: 'Negotiation skills pay off everywhere.', facts: ['{mentor} advised the user to take a negotiation course.'] },
    question: 'What training did the woman who led the German branch advise me to do?', answer: 'a negotiation course' },
  { first: { user: 'I leave my spare house key with {keyholder} next door.', agent: 'Good to have someone you trust nearby.', facts: ['{keyholder} next door keeps the user\'s spare key.'] },
    second: { user: '{keyholder} is away in Portugal until the end of the month.', agent: 'Hopefully the weather is kind to them.', facts: ['{keyholder} is in Portugal until the end of the month.'] },
    question: 'Is the person holding my spare key around at the moment?', answer: 'no, in Portugal until the end of the month' },
  { first: { user: 'My cousin {cousin} studies marine biology.', agent: 'What a fascinating field.', facts: ['The user\'s cousin {cousin} studies marine biology.'] },
    second: { user: '{cousin} sent me photos of a humpback whale from the research boat.', agent: 'That must have been breathtaking.', facts: ['{cousin} photographed a humpback whale.'] },
    question: 'Which animal did my relative who researches the ocean take pictures of?', answer: 'a humpback whale' },
];

export const UPDATES: TwoTurnTemplate[] = [
  { first: { user: 'I work as a barista in a café downtown.', agent: 'Early mornings, I imagine.', facts: ['The user works as a barista.'] },
    second: { user: 'Big news: I quit the café and started as a junior web developer this week.', agent: 'What a career change, good luck!', facts: ['The user is now a junior web developer.'] },
    question: 'What is my job these days?', answer: 'junior web developer' },
  { first: { user: 'We live in a tiny flat in the centre of {city2}.', agent: 'City centre living has its perks.', facts: ['The user lives in a small flat in {city2}.'] },
    second: { user: 'We moved out to a house in the suburbs, with a garden at last.', agent: 'Enjoy the extra space.', facts: ['The user now lives in a suburban house with a garden.'] },
    question: 'What kind of home do I live in now?', answer: 'a house with a garden in the suburbs' },
  { first: { user: 'I have been vegetarian for years.', agent: 'Plenty of great recipes for that.', facts: ['The user is vegetarian.'] },
    second: { user: 'Since last month I am fully vegan, no dairy or eggs any more.', agent: 'Watch your B12 intake.', facts: ['The user is now vegan.'] },
    question: 'What diet do I follow at present?', answer: 'vegan' },
  { first: { user: 'My phone is a five-year-old Android that barely holds a charge.', agent: 'A new battery could give it more life.', facts: ['The user has an old Android phone.'] },
    second: { user: 'I finally replaced my phone, I went for an iPhone this time.', agent: 'Enjoy the new device.', facts: ['The user now uses an iPhone.'] },
    question: 'Which smartphone am I using nowadays?', answer: 'an iPhone' },
  { first: { user: 'I go swimming every Monday evening.', agent: 'A good way to start the week.', facts: ['The user swims on Monday evenings.'] },
    second: { user: 'I moved my swims to Saturday mornings, the pool is much quieter.', agent: 'Quiet lanes are a luxury.', facts: ['The user now swims on Saturday mornings.'] },
    question: 'On which day do I do my laps now?', answer: 'Saturday mornings' },
  { first: { user: 'My manager is {boss}, she is strict but fair.', agent: 'Fair managers are worth a lot.', facts: ['The user\'s manager is {boss}.'] },
    second: { user: '{boss} left the company; {newboss} is my manager now.', agent: 'Changes at the top take some getting used to.', facts: ['The user\'s manager is now {newboss}.'] },
    question: 'Who do I report to at work currently?', answer: '{newboss}' },
  { first: { user: 'I am training for a 10k race in the spring.', agent: 'A 10k is a great goal.', facts: ['The user is training for a 10k race.'] },
    second: { user: 'I signed up for the full marathon in October instead of the 10k.', agent: 'That is a big step up in training.', facts: ['The user is now training for a marathon in October.'] },
    question: 'Which running event am I preparing for now?', answer: 'the October marathon' },
  { first: { user: 'I am single and honestly enjoying it.', agent: 'Time for yourself is valuable.', facts: ['The user is single.'] },
    second: { user: 'I have been seeing someone called {partner} for a couple of months now.', agent: 'I am happy for you.', facts: ['The user is in a relationship with {partner}.'] },
    question: 'Am I dating anyone?', answer: 'yes, {partner}' },
  { first: { user: 'I drink about three coffees a day.', agent: 'That is a fair amount of caffeine.', facts: ['The user drinks three coffees a day.'] },
    second: { user: 'I cut out coffee completely, it is only herbal tea for me now.', agent: 'Your sleep may thank you.', facts: ['The user has stopped drinking coffee and drinks herbal tea.'] },
    question: 'How much caffeine do I have these days?', answer: 'none, only herbal tea' },
  { first: { user: 'I have supported {team} since I was a kid.', agent: 'Loyal fans are the best fans.', facts: ['The user supports {team}.'] },
    second: { user: 'After the ownership scandal I switched allegiance to {team2}.', agent: 'A hard decision for any fan.', facts: ['The user now supports {team2}.'] },
    question: 'Which football club am I a fan of now?', answer: '{team2}' },
];

/** Turns that answer no question: everyday requests, some sharing words with the questions. */
export const FILLERS: TurnText[] = [
  { user: 'Can you suggest a quick dinner with chickpeas and spinach?', agent: 'Try a chickpea and spinach curry with rice, ready in twenty minutes.', facts: ['The user asked for a chickpea and spinach dinner idea.'] },
  { user: 'What is a polite way to decline a meeting invitation?', agent: 'Thank them, say you cannot attend, and offer to read the notes.', facts: ['The user asked how to decline a meeting politely.'] },
  { user: 'How long should I boil an egg for a runny yolk?', agent: 'About six minutes from boiling water.', facts: ['The user asked how to soft-boil an egg.'] },
  { user: 'Give me a stretching routine for after work.', agent: 'Neck rolls, hamstring stretches and a few minutes of child\'s pose.', facts: ['The user asked for an after-work stretching routine.'] },
  { user: 'What should I pack for a weekend by the sea?', agent: 'Layers, a rain jacket, sunscreen and comfortable shoes.', facts: ['The user asked what to pack for a seaside weekend.'] },
  { user: 'Explain the difference between a Roth and a traditional pension plan.', agent: 'One is taxed now, the other when you withdraw.', facts: ['The user asked about pension plan types.'] },
  { user: 'Recommend a podcast about history.', agent: 'The Rest Is History is entertaining and well researched.', facts: ['The user asked for a history podcast recommendation.'] },
  { user: 'Help me write a thank-you note to my child\'s teacher.', agent: 'Mention one thing the teacher did that made a difference this year.', facts: ['The user wanted to thank their child\'s teacher.'] },
  { user: 'Is it worth buying an air fryer?', agent: 'If you cook for one or two, it saves time and energy.', facts: ['The user asked whether to buy an air fryer.'] },
  { user: 'What are good houseplants for a dark bathroom?', agent: 'Snake plants and ferns cope well with low light.', facts: ['The user asked about plants for a dark bathroom.'] },
  { user: 'How do I get red wine out of a carpet?', agent: 'Blot, then cover with salt or a mix of dish soap and vinegar.', facts: ['The user asked how to remove a wine stain.'] },
  { user: 'Can you summarise the plot of Hamlet in three sentences?', agent: 'A prince learns his uncle killed his father, hesitates, and everyone dies.', facts: ['The user asked for a summary of Hamlet.'] },
  { user: 'What is a good board game for four adults?', agent: 'Ticket to Ride or Codenames work well.', facts: ['The user asked for a board game for four adults.'] },
  { user: 'Any tips for running in hot weather?', agent: 'Run early, drink before you are thirsty, and slow down.', facts: ['The user asked for hot-weather running tips.'] },
  { user: 'How do I convert 180 degrees Celsius to Fahrenheit?', agent: 'It is 356 °F.', facts: ['The user asked for a temperature conversion.'] },
  { user: 'Suggest a name for a fantasy tavern.', agent: 'The Gilded Badger.', facts: ['The user asked for a fantasy tavern name.'] },
  { user: 'What can I do about a dripping kitchen tap?', agent: 'Usually a worn washer; turn off the water and replace it.', facts: ['The user asked how to fix a dripping tap.'] },
  { user: 'Write a short poem about autumn rain.', agent: 'Grey threads stitch the amber trees; the gutters hum their song.', facts: ['The user asked for an autumn poem.'] },
  { user: 'How many hours of sleep does a teenager need?', agent: 'Eight to ten hours a night.', facts: ['The user asked about teenagers\' sleep needs.'] },
  { user: 'What is the best way to learn to touch type?', agent: 'Daily short sessions with a typing tutor, without looking at the keys.', facts: ['The user asked how to learn touch typing.'] },
  { user: 'Plan a cheap day out for a family of four.', agent: 'A picnic in a park, a free museum and an ice cream.', facts: ['The user asked for a cheap family day out.'] },
  { user: 'Why does my bread come out dense?', agent: 'Often too little proving time or old yeast.', facts: ['The user asked why their bread is dense.'] },
  { user: 'Can you check this sentence: "Their going to the station."', agent: 'It should be "They\'re going to the station."', facts: ['The user asked for a grammar check.'] },
  { user: 'What is a good gift for a coworker who is leaving?', agent: 'A nice notebook or a card signed by the team.', facts: ['The user asked for a leaving gift idea for a coworker.'] },
  { user: 'How do I keep cut flowers fresh longer?', agent: 'Trim the stems, change the water daily, keep them out of the sun.', facts: ['The user asked how to keep flowers fresh.'] },
  { user: 'Tell me a fun fact about octopuses.', agent: 'They have three hearts and blue blood.', facts: ['The user asked for a fact about octopuses.'] },
  { user: 'What should I look for when buying a used bicycle?', agent: 'Check the frame for cracks, the chain, brakes and wheels.', facts: ['The user asked how to choose a used bicycle.'] },
  { user: 'How do I make my emails sound less harsh?', agent: 'Open with a greeting and soften requests with "could you".', facts: ['The user asked how to soften their emails.'] },
  { user: 'Recommend a film for a rainy Sunday.', agent: 'Paddington 2 never fails.', facts: ['The user asked for a film recommendation.'] },
  { user: 'What is the capital of Australia?', agent: 'Canberra.', facts: ['The user asked for the capital of Australia.'] },
  { user: 'How do I start a compost heap?', agent: 'Mix green and brown waste, keep it moist and turn it monthly.', facts: ['The user asked how to start composting.'] },
  { user: 'Give me three ideas for a team-building activity.', agent: 'An escape room, a cooking class or a quiz night.', facts: ['The user asked for team-building ideas.'] },
  { user: 'What is the weather usually like in Lisbon in March?', agent: 'Mild, around 17 °C, with some rain.', facts: ['The user asked about the weather in Lisbon in March.'] },
  { user: 'How do I politely remind someone they owe me money?', agent: 'A friendly, direct message with the amount and a date works best.', facts: ['The user asked how to ask for money back.'] },
  { user: 'Can you explain what inflation is to a ten-year-old?', agent: 'Prices slowly go up, so the same coins buy a little less each year.', facts: ['The user asked for a simple explanation of inflation.'] },
  { user: 'What exercises help with a sore lower back?', agent: 'Cat-cow stretches, bridges and gentle walking.', facts: ['The user asked about exercises for back pain.'] },
  { user: 'Suggest a vegetarian lasagne recipe.', agent: 'Layer roasted vegetables, ricotta and tomato sauce between the sheets.', facts: ['The user asked for a vegetarian lasagne recipe.'] },
  { user: 'How do I reset my home router?', agent: 'Hold the reset button for ten seconds, then set it up again.', facts: ['The user asked how to reset a router.'] },
  { user: 'What is a good name for a goldfish?', agent: 'Bubbles, or Captain Fin.', facts: ['The user asked for a goldfish name.'] },
  { user: 'Translate "good morning" into Italian.', agent: '"Buongiorno."', facts: ['The user asked for an Italian translation.'] },
  { user: 'Any advice for a first job interview?', agent: 'Research the company, prepare examples and ask a question at the end.', facts: ['The user asked for job interview advice.'] },
  { user: 'How often should I water a cactus?', agent: 'Every two to three weeks, less in winter.', facts: ['The user asked how often to water a cactus.'] },
  { user: 'What is a healthy snack for the afternoon?', agent: 'An apple with peanut butter or a handful of nuts.', facts: ['The user asked for a healthy snack idea.'] },
  { user: 'How do I clean a cast-iron pan?', agent: 'Hot water and a brush, dry it well and oil it lightly.', facts: ['The user asked how to clean a cast-iron pan.'] },
  { user: 'Draft a message asking my landlord to fix the heating.', agent: 'Describe the problem, when it started and ask for a repair date.', facts: ['The user asked for a message to their landlord about heating.'] },
  { user: 'What are the rules of pickleball?', agent: 'Like a small tennis court with paddles; serve underhand and avoid the kitchen zone.', facts: ['The user asked about pickleball rules.'] },
];

/** Persona values, one list per slot; each conversation draws its own. */
export const SLOTS: Record<string, string[]> = {
  breed: ['border collie', 'beagle', 'dachshund', 'Labrador', 'whippet'],
  pet: ['Pixel', 'Mabel', 'Juniper', 'Biscuit', 'Olive'],
  child: ['Maya', 'Ines', 'Freya', 'Leila', 'Nora'],
  car: ['Volvo 240', 'Saab 900', 'Peugeot 205', 'Mercedes W123', 'Fiat Panda'],
  author: ['Ursula Le Guin', 'Zadie Smith', 'Hilary Mantel', 'Toni Morrison', 'Elena Ferrante'],
  language: ['Japanese', 'Portuguese', 'Korean', 'Greek', 'Turkish'],
  restaurant: ['Casa Lucio', 'El Tigre', 'La Bodeguita', 'Barra Alta', 'Taberna Sol'],
  friend: ['Tomasz', 'Priya', 'Kofi', 'Aoife', 'Mateo'],
  friend2: ['Jonas', 'Amara', 'Rosa', 'Henrik', 'Yuki'],
  sister: ['Hana', 'Clara', 'Sofia', 'Ayesha', 'Greta'],
  city: ['Lisbon', 'Montreal', 'Melbourne', 'Seoul', 'Nairobi'],
  city2: ['Leeds', 'Lyon', 'Porto', 'Bremen', 'Utrecht'],
  neighbour: ['Mr Okafor', 'Mrs Lindqvist', 'Mr Moretti', 'Mrs Haddad', 'Mr Novak'],
  colleague: ['Dev', 'Marta', 'Olu', 'Sanne', 'Ravi'],
  uncle: ['Uncle Pierre', 'Uncle Bashir', 'Uncle Gerd', 'Uncle Rafael', 'Uncle Sean'],
  town: ['Dinan', 'Hexham', 'Tavira', 'Meissen', 'Kinsale'],
  host: ['Beatriz', 'Ingrid', 'Fatima', 'Lucy', 'Miriam'],
  son: ['Leo', 'Oskar', 'Idris', 'Finn', 'Mateus'],
  mentor: ['Dagmar', 'Helen', 'Noor', 'Vera', 'Annika'],
  keyholder: ['Mrs Pereira', 'Mr Walsh', 'Mrs Kowalski', 'Mr Adeyemi', 'Mrs Berg'],
  cousin: ['Elin', 'Paloma', 'Zainab', 'Isla', 'Marguerite'],
  boss: ['Karen Liu', 'Sandra Voss', 'Ruth Abebe', 'Julia Marsh', 'Nadia Petrov'],
  newboss: ['Tom Becker', 'Ahmed Khan', 'Lars Nilsen', 'Owen Price', 'Diego Ramos'],
  partner: ['Sam', 'Alex', 'Robin', 'Jamie', 'Kai'],
  team: ['Everton', 'Valencia', 'Torino', 'Schalke', 'Celtic'],
  team2: ['Brentford', 'Girona', 'Bologna', 'Freiburg', 'Hibernian'],
};
